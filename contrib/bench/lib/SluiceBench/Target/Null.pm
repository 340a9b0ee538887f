package SluiceBench::Target::Null;

# contrib/bench/nullserver: not a proxy, a reference.  It answers every
# point select from memory with one recv and one send, so its CPU per
# query is what this host's kernel charges any server for a query over
# loopback TCP (reading it, sending the answer, waking the client): the
# floor under a cache hit of any proxy, measured in the same run as the
# cache (--cache), where the anchors' figures come from other hosts.
# `threads` => N | 'auto': N epoll loops on SO_REUSEPORT listeners, like
# workers, and SCHED_BATCH like sluice's workers (chrt --batch 0), so
# that the two differ only in what they do per query.  TCP only; no
# idle-session test (variant).

use strict;
use warnings;

use parent -norequire, 'SluiceBench::Target';

use Sluice::Sandbox qw(find_bin);

sub transports { qw(tcp) }

sub threads {
    my ($self) = @_;
    my $n = $self->{threads} // 1;
    return $n eq 'auto' ? $self->{ctx}{nproc} : $n;
}

sub label {
    my ($self) = @_;
    return $self->{label} // 'nullserver (answers from memory), '
        . $self->threads . ' thread' . ($self->threads == 1 ? '' : 's')
        . ', chrt --batch';
}

sub unavailable {
    my ($self) = @_;
    return $self->{ctx}{nullserver} ? undef : 'nullserver was not built';
}

sub version { 'contrib/bench/nullserver.c' }

sub start {
    my ($self, %o) = @_;
    my $d = $self->prepare_dir('unused.sock');      # TCP only
    # chrt execs nullserver: the pid stays the server's
    $self->spawn_one([ find_bin('chrt'), '--batch', '0',
        $self->{ctx}{nullserver}, '-P', $self->{port}, '-t', $self->threads ],
        "$d/stderr.log");
    return $self;
}

sub stop {
    my ($self) = @_;
    $self->stop_one('nullserver');
    return $self;
}

1;
