#!/usr/bin/perl

# Hostile bytes before authentication: handshake responses with random
# capability bits, lengths that lie, fields cut anywhere, auth switch
# answers of any shape, through auth local and auth passthrough.  The
# worker survives, good clients are served, the sanitizer build reports
# nothing, and no backend connection is left behind.  Fixed seed.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_connect parse_greeting
                    native_token handshake_response);

my $t = Sluice::Test->new;
$t->has('readconn');
$SIG{PIPE} = 'IGNORE';      # sluice may close on what we still write

# Random command bytes include COM_SHUTDOWN and KILLs of random thread
# ids: the fuzzing account may only read, so only its own sessions suffer.
my $fuzz = $t->name;
$t->server_user($fuzz, 'secret');

$t->write_file_expand('sluice.conf', <<"EOC");
worker_processes 1;
events { worker_connections 256; }
mysql {
    user $fuzz { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        auth_failure_threshold 1000;
        max_handshakes_per_host 0;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
        auth passthrough;
        max_handshakes_per_host 0;
    }
}
EOC
$t->run;
$t->plan(5);

srand(7);
my ($worker) = $t->worker_pids;
sub rnd { join '', map { chr int rand 256 } 1 .. $_[0] }

# A handshake response, mostly well formed, then mangled.
sub response {
    my ($scramble) = @_;
    my $k = int rand 5;
    return rnd(int rand 120) if $k == 0;
    my $caps = int rand 2 ? int(rand 2**32) : 0x000fa685;
    my $r = pack('V V C', $caps, int rand 2**24, int rand 256)
        . (int rand 2 ? "\0" x 23 : rnd(23))
        . (int rand 4 ? $fuzz : rnd(int rand 500)) . "\0";
    $r .= int rand 2 ? chr(20) . native_token('secret', $scramble)
                     : chr(int rand 256) . rnd(int rand 40);
    $r .= rnd(int rand 60) if $k >= 2;
    $r = substr($r, 0, int rand length $r) if $k == 3;
    return $r;
}

my $n = 0;
for my $i (1 .. 500) {
    my $s = raw_connect($t->port($i % 2)) or next;
    my (undef, $g) = read_packet($s);
    my $gr = parse_greeting($g) or next;
    $n++;
    my $pl = response($gr->{scramble});
    my $pkt = substr(pack('V', length $pl), 0, 3) . chr(int rand 3 ? 1 : int rand 256)
        . $pl;
    substr($pkt, 0, 3) = substr(pack('V', int rand 2000), 0, 3)
        if rand() < 0.1;
    syswrite($s, $pkt);
    if (rand() < 0.5) {            # whatever came back, answer with junk
        $s->blocking(0);
        my $buf;
        sysread($s, $buf, 4096);
        syswrite($s, substr(pack('V', 20), 0, 3) . chr(3) . rnd(20));
    }
    close $s;
}
cmp_ok($n, '>=', 490, 'hostile clients were greeted and sent garbage');
my ($now) = $t->worker_pids;
is($now, $worker, 'the worker survived (same pid)');
my $d = $t->dbh(user => $fuzz);
is($d && $d->selectrow_array('SELECT 6 * 7'), 42, 'a good client is served');
my $pd = $t->dbh(port => $t->port(1), user => $fuzz);
is($pd && $pd->selectrow_array('SELECT 43'), 43, 'also through passthrough');
ok(wait_for(sub {
    $t->primary_dbh->selectrow_array("SELECT COUNT(*) FROM "
        . "information_schema.processlist WHERE user IN ('$fuzz', "
        . "'unauthenticated user')") <= 2 }, timeout => 20,
    what => 'backend sessions to close'),
   'no backend connection is left behind');
