#!/usr/bin/perl

# idle_timeout: a session with no traffic for that long is closed by
# sluice (logged), while a session whose query runs longer than the
# timeout is left alone until its result has been sent; the timeout is
# measured from the last traffic, not from the login.  Also auth_timeout:
# a client that never answers the greeting is dropped.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readconn');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        idle_timeout 1s;
        auth_timeout 1s;
    }
}
EOF
$t->run;
$t->plan(10);

# --- an idle session is closed -------------------------------------------

my $idle = $t->dbh(port => $t->port(0));
ok($idle && $idle->selectrow_array('SELECT 1'), 'a session logs in');
my $t0 = time;
ok(wait_for(sub { $t->grep_log(qr/closed after idle_timeout/) },
            timeout => 10, what => 'the idle session to be closed'),
   'sluice closes it after idle_timeout');
cmp_ok(time - $t0, '>=', 0.9, 'not before the timeout');
ok(!defined $idle->selectrow_array('SELECT 2'),
   'the client finds its connection closed');

# --- activity pushes the deadline; a long query is never cut ------------

my $busy = $t->dbh(port => $t->port(0));
my $ok = 1;
for my $i (1 .. 6) {                 # 1.8 s of traffic, 0.3 s apart
    $ok &&= ($busy->selectrow_array('SELECT SLEEP(0.3)') // -1) == 0;
}
ok($ok, 'a session with traffic every 0.3 s outlives idle_timeout 1s');

is($busy->selectrow_array('SELECT SLEEP(2), 7'), 0,
   'a query running 2 s (longer than the timeout) completes');
is($busy->selectrow_array('SELECT 8'), 8, 'and the session goes on');
undef $busy;

# a session idle between short queries: the deadline runs
# from the last traffic, so four 0.6 s pauses (2.4 s in all) never reach
# the 1 s timeout.  The pauses are the thing under test, not a wait.
my $gappy = $t->dbh(port => $t->port(0));
my $alive = 1;
for my $i (1 .. 4) {
    Time::HiRes::sleep(0.6);
    $alive &&= ($gappy->selectrow_array("SELECT $i") // -1) == $i;
}
ok($alive, 'idle gaps of 0.6 s between queries never trip idle_timeout 1s');
undef $gappy;

# --- auth_timeout -----------------------------------------------------------

my $mute = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
    PeerPort => $t->port(0), Timeout => 5);
my $greeting = '';
$mute->sysread($greeting, 4096) if $mute;
ok(length $greeting > 4, 'a raw client gets the greeting');
ok(wait_for(sub { $t->grep_log(qr/client timed out in handshake/) },
            timeout => 10, what => 'the silent client to be dropped'),
   'a client that never answers is dropped after auth_timeout');
close $mute if $mute;
