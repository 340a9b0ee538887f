#!/usr/bin/perl

# t/fuzz_client.t in command mode: hostile bytes from logged-in clients
# of servers with a filter (t/modules/testfilter) and of one whose router
# keeps two backends per session (t/modules/testsplit).  Packets of random
# lengths and sequence ids, cut at random places, with what the command
# layer acts on over-represented: the filter's own commands (answers of
# 2 MB, pauses, ERR), replica routing, KILL, COM_CHANGE_USER, and
# commands larger than a buffer.  Whatever they send, the worker survives
# (same pid), other sessions are served, and the sanitizer build reports
# nothing.  The seed is fixed: a failure replays.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_login raw_connect
                    parse_greeting native_token handshake_response);

my $t = Sluice::Test->new;
$t->has('testfilter', 'testsplit');
$SIG{PIPE} = 'IGNORE';      # sluice may close on what we still write

# Random command bytes include COM_SHUTDOWN and KILLs of random thread
# ids: the fuzzing account may only read, so only its own sessions suffer.
my $fuzz = $t->name;
$t->server_user($fuzz, 'secret');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 256; }
mysql {
    buffer_size 16k;
    user $fuzz { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        filters testfilter;
        connect_timeout 2s;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
        auth passthrough;
        filters testfilter;
        connect_timeout 2s;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router testsplit;
        upstream cluster;
        filters testfilter;
        connect_timeout 2s;
    }
}
EOF
$t->run;
$t->plan(7);

srand(1);
my ($worker) = $t->worker_pids;

sub rnd_bytes { join '', map { chr int rand 256 } 1 .. $_[0] }

# A payload the proxy will look at more closely than most.
sub interesting {
    my $k = int rand 14;
    return "\x03/*tf:rows " . int(rand 30000) . "*/"          if $k == 8;
    return "\x03/*tf:pause " . int(rand 80) . "*/ SELECT 1"   if $k == 9;
    return "\x03/*tf:" . rnd_bytes(int rand 10)               if $k == 10;
    return "\x03/*replica*/ SELECT " . int rand 1000          if $k == 11;
    return "\x03SELECT '" . ('q' x (10000 + int rand 40000)) . "'"
                                                           if $k == 12;
    return "\x03/*tf:err*/" . rnd_bytes(20000 + int rand 20000)
                                                           if $k == 13;
    return "\x03KILL " . (int rand 2 ? 'QUERY ' : '')
        . (0x80000000 + int rand 64)                      if $k == 0;
    return "\x03 /*x*/ kill " . rnd_bytes(int rand 12)     if $k == 1;
    return "\x0c" . pack('V', 0x80000000 + int rand 64)  if $k == 2;
    return "\x0c" . rnd_bytes(int rand 6)                  if $k == 3;
    return "\x11$fuzz\0\x14" . rnd_bytes(20) . "test\0" . rnd_bytes(int rand 30)
                                                           if $k == 4;
    return "\x11" . rnd_bytes(int rand 64)                 if $k == 5;
    return "\x03SELECT " . int rand 1000                   if $k == 6;
    return chr(int rand 256) . rnd_bytes(int rand 40);
}

sub passthrough_login {
    my $s = raw_connect($t->port(1));
    my (undef, $pl) = read_packet($s);
    my $g = parse_greeting($pl) or return $s;
    send_packet($s, 1, handshake_response(user => $fuzz,
        token => native_token('secret', $g->{scramble})));
    return $s;
}

my $sessions = 0;
for my $i (1 .. 600) {
    my $s = $i % 3 == 0 ? passthrough_login()
          : raw_login($t->port($i % 3 == 1 ? 0 : 2), user => $fuzz);
    next unless $s;
    read_packet($s);                            # the login's OK
    $sessions++;
    for (1 .. 1 + int rand 6) {
        my $pl = interesting();
        my $seq = int rand 4 ? 0 : int rand 256;
        my $pkt = substr(pack('V', length $pl), 0, 3) . chr($seq) . $pl;
        # sometimes a lie about the length, sometimes cut short
        substr($pkt, 0, 3) = substr(pack('V', int rand 300), 0, 3)
            if rand() < 0.15;
        $pkt = substr($pkt, 0, int rand length $pkt) if rand() < 0.15;
        syswrite($s, $pkt);
    }
    # read what comes within a moment, then hang up
    $s->blocking(0);
    my $buf;
    sysread($s, $buf, 65536);
    close $s;
}
cmp_ok($sessions, '>=', 580, 'hostile sessions logged in and sent garbage');

my ($now) = $t->worker_pids;
is($now, $worker, 'the worker survived (same pid)');
my $d = $t->dbh(user => $fuzz);
is($d && $d->selectrow_array('SELECT 41 + 1'), 42,
   'a normal session is served afterwards');
my $pd = $t->dbh(port => $t->port(1), user => $fuzz);
is($pd && $pd->selectrow_array('SELECT 43'), 43,
   'and through passthrough');
my $sd = $t->dbh(port => $t->port(2), user => $fuzz);
is($sd && $sd->selectrow_array('/*replica*/ SELECT 44'), 44,
   'and through the router with two backends');
ok(wait_for(sub { !$t->grep_log(qr/\[(?:alert|crit)\]/) }, timeout => 1),
   'no alert or crit line');
ok(wait_for(sub {
    my $n = $t->primary_dbh->selectrow_array("SELECT COUNT(*) FROM "
        . "information_schema.processlist WHERE user = '$fuzz'");
    $n <= 3 }, timeout => 20, what => 'backend sessions to close'),
   'the hostile sessions left no backend connection behind (3: the normal '
   . 'sessions above)');
