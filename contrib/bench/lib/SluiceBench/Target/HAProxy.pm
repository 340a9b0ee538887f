package SluiceBench::Target::HAProxy;

# Debian's HAProxy 2.6 in tcp mode forwarding to the primary: the usual
# way to put a MySQL server behind a proxy, and the bar sluice's readconn
# is held to.  One process (no master-worker), `nbthread` threads, a TCP
# and a unix-socket bind.  Process-level logging at notice on stderr and
# no `log` in the proxy sections: no line per connection.  sched =>
# 'batch' starts it under `chrt --batch 0` (SCHED_BATCH, like sluice's
# workers by default).

use strict;
use warnings;

use parent -norequire, 'SluiceBench::Target';


use Sluice::Sandbox qw(find_bin);
use SluiceBench::Util qw(run_capture);

use constant FD_RESERVE => 200;   # listeners, pollers, per-thread pipes

sub bin { find_bin('haproxy') }

sub threads {
    my ($self) = @_;
    my $n = $self->{nbthread} // 1;
    return $n eq 'auto' ? $self->{ctx}{nproc} : $n;
}

sub label {
    my ($self) = @_;
    return $self->{label} if $self->{label};
    return 'HAProxy tcp, nbthread ' . $self->threads
        . (($self->{sched} // '') eq 'batch' ? ', chrt --batch' : '');
}

# One process holds both sides of every session.
sub idle_capacity {
    my ($self) = @_;
    return int(($self->{ctx}{nofile} - FD_RESERVE) / 2);
}

sub _conf {
    my ($self) = @_;
    my $c = $self->{ctx};
    my $d = $self->{dir};
    my $maxconn = $self->idle_capacity;
    my $nbthread = $self->threads;
    return <<CONF;
# written by contrib/bench for target $self->{name}
global
    nbthread $nbthread
    maxconn $maxconn
    pidfile $d/haproxy.pid
    log stderr format raw local0 notice

defaults
    mode tcp
    maxconn $maxconn
    timeout connect 5s
    timeout client 1h
    timeout server 1h

frontend mysql
    bind 127.0.0.1:$self->{port}
    bind unix\@$self->{unix}
    default_backend primary

backend primary
    server primary 127.0.0.1:$c->{primary}{port}
CONF
}

sub start {
    my ($self, %o) = @_;
    my $d = $self->prepare_dir('haproxy.sock');
    my $cfg = "$d/haproxy.cfg";
    open(my $fh, '>', $cfg) or die "$cfg: $!\n";
    print $fh $self->_conf;
    close $fh or die "$cfg: $!\n";
    my ($rc, $out) = run_capture(cmd => [ bin(), '-c', '-f', $cfg ],
                                 timeout => 30);
    die "haproxy -c rejects $cfg ($rc):\n$out" if $rc != 0;

    my $log = "$d/stderr.log";
    $self->{log_offset} = -s $log // 0;
    # chrt execs haproxy: the pid stays the proxy's
    my @chrt = ($self->{sched} // '') eq 'batch'
        ? (find_bin('chrt'), '--batch', '0') : ();
    $self->spawn_one([ @chrt, bin(), '-db', '-f', $cfg ], $log);
    return $self;
}

# SIGTERM is HAProxy's immediate stop.
sub stop {
    my ($self) = @_;
    $self->stop_one('haproxy') or return $self;
    my $log = "$self->{dir}/stderr.log";
    push @{ $self->{problems} }, map { "haproxy: $_" }
        SluiceBench::Target::log_lines_since($log, $self->{log_offset},
                                             qr/\[ALERT\]/);
    push @{ $self->{notes} }, map { "haproxy: $_" }
        SluiceBench::Target::log_lines_since($log, $self->{log_offset},
                                             qr/\[WARNING\]/);
    return $self;
}

sub version { $_[0]{ctx}{versions}{haproxy} }

1;
