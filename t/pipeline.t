#!/usr/bin/perl

# Ordinary traffic the response tracker must follow, or a reload never
# finishes: a client that pipelines 40 queries in one write (deeper than
# the old fixed queue of 16), and one that sends a command byte the server
# does not know (answered by one ERR).  Both then stay connected and idle;
# after a reload the old worker must hand them over to the new worker
# (the tracker knows they are at rest) and exit.  And COM_STMT_CLOSE + COM_QUIT
# in one write (as sysbench and JDBC send them) is a normal end: the
# server hanging up after it is logged at info, not [error].

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Sandbox qw(pid_alive);
use Sluice::Wire qw(read_packet raw_login read_err);

use constant {
    DEPTH    => 40,
    DEADLINE => 10,     # s for the old worker to go, well past the 1s
};

my $t = Sluice::Test->new;
$t->has('readconn');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
worker_shutdown_timeout 1s;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
}
EOF
$t->run;
$t->plan(13);

sub packet { substr(pack('V', length $_[1]), 0, 3) . chr($_[0]) . $_[1] }

# A logged-in raw client (no DEPRECATE_EOF: results end with EOF).
sub login {
    my $s = raw_login($t->port(0)) or return undef;
    my (undef, $ok) = read_packet($s);
    return defined $ok && ord($ok) == 0 ? $s : undef;
}

# Packets up to and including an EOF (0xfe, shorter than 9 bytes); undef
# on ERR, EOF of the socket or timeout.
sub until_eof {
    my ($s) = @_;
    my @rows;
    for (;;) {
        my (undef, $pl) = read_packet($s);
        return undef if !defined $pl || ord($pl) == 0xff;
        return \@rows if ord($pl) == 0xfe && length $pl < 9;
        push @rows, $pl;
    }
}

# One text result set of one column: its values, or undef.
sub read_result {
    my ($s) = @_;
    my (undef, $count) = read_packet($s);
    return undef unless defined $count && $count eq "\x01";
    until_eof($s) // return undef;                      # the definition
    my $rows = until_eof($s) // return undef;
    return [ map { substr($_, 1) } @$rows ];            # lenenc < 251
}

# The worker serving the session on socket $s, from its "accepted" line.
sub worker_of {
    my ($s) = @_;
    my $peer = '127.0.0.1:' . $s->sockport;
    my ($line) = $t->grep_log(qr/accepted on .*, client: \Q$peer\E,/);
    return $line && $line =~ /\] (\d+): \*\d+ accepted on / ? $1 : undef;
}

# Reload, then the worker holding $s must hand it over (idle) and exit.
sub reload_away {
    my ($what, $s) = @_;
    my $old = worker_of($s);
    ok($t->reload, "$what: reload");
    ok($old && wait_for(sub { !pid_alive($old) }, timeout => DEADLINE,
                        what => "old worker $old to exit"),
       "$what: the old worker hands the idle session over and exits");
}

# The session goes on in the new worker: SELECT 1 answered.
sub goes_on {
    my ($s) = @_;
    syswrite($s, packet(0, "\x03SELECT 1"));
    my $v = read_result($s);
    return $v && "@$v" eq '1';
}

# The server closed the session: the socket reads EOF.
sub closed {
    my ($s) = @_;
    my $r = sysread($s, my $buf, 1);
    return defined $r && $r == 0;
}

# --- a deep pipeline -----------------------------------------------------

my $deep = login();
ok($deep, 'pipelining client logged in');
syswrite($deep, join '', map { packet(0, "\x03SELECT 1") } 1 .. DEPTH);
my $got = 0;
for (1 .. DEPTH) {
    my $v = read_result($deep) // last;
    $got++ if "@$v" eq '1';
}
is($got, DEPTH, DEPTH . ' pipelined SELECT 1 all answered');
reload_away('deep pipeline', $deep);
ok(goes_on($deep), 'deep pipeline: the session goes on after the reload');

# --- an unknown command --------------------------------------------------

my $odd = login();
syswrite($odd, packet(0, "\x7f"));
my $e = read_err($odd);
is($e && $e->{code}, 1047, 'unknown command 0x7f: ER_UNKNOWN_COM_ERROR');
reload_away('unknown command', $odd);
ok(goes_on($odd), 'unknown command: the session goes on after the reload');

# --- COM_QUIT behind COM_STMT_CLOSE --------------------------------------

my $bye = login();
my $peer = '127.0.0.1:' . $bye->sockport;
syswrite($bye, packet(0, "\x19\x01\0\0\0") . packet(0, "\x01"));
ok(closed($bye), 'STMT_CLOSE + QUIT: the session ends');
ok(wait_for(sub {
    $t->grep_log(qr/backend closed connection, client: \Q$peer\E,/)
}, what => 'the end of the session'), 'STMT_CLOSE + QUIT: the end is logged');
is(scalar $t->grep_log(
       qr/\[error\].* backend closed connection, client: \Q$peer\E,/), 0,
   'STMT_CLOSE + QUIT: the server hanging up is no error');
ok(scalar $t->grep_log(
       qr/\[info\].* backend closed connection, client: \Q$peer\E,/),
   'STMT_CLOSE + QUIT: logged at info');
