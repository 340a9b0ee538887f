#!/usr/bin/perl

# The Redis tier's strict mode (issue 22): a write committed through any
# sluice host is never followed, on any host, by a cached answer older
# than it once the write's OK reached its client.  Two hosts, 2 workers
# each, no binlog reader: each write's OK waits until Redis has its
# tables' new generations, and every hit is Redis', checked against them
# in the same round trip.  So a read on the other host right after the
# OK sees the write, every time, with no wait, even while Redis delays
# the bumps.  Redis frozen: the writes
# still succeed (their OK waits at most the timeout, counted) and reads
# go to the server.  (A bump that times out lets its OK go: the write
# committed; counted as strict_failed.)

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Redis;

my $A = Sluice::Test->new;
Sluice::Redis->need($A, qw(cache cache_redis readconn));
my $B = Sluice::Test->new;

my $r = Sluice::Redis->start(dir => $A->testdir);
my $rport = $r->port;
my $p = $A->primary_dbh;
$p->do('CREATE OR REPLACE TABLE test.rs (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.rs VALUES (1, 0), (2, 0)');

for my $t ($A, $B) {
    $t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    redis shared { server 127.0.0.1:$rport; timeout 1s; strict on; }
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        server %%PRIMARY%% role=primary;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_ttl 600s; cache_redis shared; }
}
EOF
    $t->run;
    $t->allow_log(qr/redis "shared": /);
}
$A->plan(14);

for my $t ($A, $B) {
    ok(wait_for(sub { $t->grep_log(qr/redis "shared": connected/) == 2 },
                what => 'both workers connected'),
       'both workers of ' . ($t == $A ? 'A' : 'B') . ' are connected');
}

sub com_select { Sluice::Test::server_status($p, 'Com_select') }
my $a = $A->dbh;
my $b = $B->dbh;
sub v { my ($h, $id) = @_;
        return scalar $h->selectrow_array("SELECT v FROM rs WHERE id = $id") }

# --- hits are Redis', checked ----------------------------------------------

is(v($a, 1), 0, 'A reads, the server answers');
ok(wait_for(sub { ($r->cli('DBSIZE') // 0) >= 2 }, what => 'the entry'),
   'and the entry goes to Redis');
my $c0 = com_select();
is(v($b, 1), 0, 'B reads it');
is(v($a, 1), 0, 'A reads it again');
is(com_select() - $c0, 0, 'both from Redis');

# --- a write's OK waits for its bump: the other host sees it at once -------

# Redis delays every write command for 50 ms (CLIENT PAUSE ... WRITE;
# Redis ends a pause at its next cron tick: up to 100 ms later, within
# the timeout of 1 s): a bump not waited for would let the read on the
# other host find the old generations, and the old entry
my @wrong;
for my $i (1 .. 20) {
    my ($w, $rd) = $i % 2 ? ($b, $a) : ($a, $b);
    $r->cli('CLIENT', 'PAUSE', 50, 'WRITE') =~ /OK/
        or push @wrong, "pause $i";
    $w->do("UPDATE rs SET v = $i WHERE id = 1") or push @wrong, "write $i";
    my $got = v($rd, 1) // 'undef';
    push @wrong, "after write $i: $got" if $got ne $i;
    v($w, 1);               # and cached again, for the next round
}
is("@wrong", '', '20 writes, each read on the other host right after its '
   . 'OK: never the old answer');
my $st = $A->cache_stats('qc');
ok($st->{redis_strict_held} >= 10,
   "A held its writes' OKs for their bumps ($st->{redis_strict_held})");
is($st->{hits}, 0, 'the zone served no hit in strict mode');
ok($st->{redis_hits} >= 10, "Redis did ($st->{redis_hits})");

# --- Redis frozen: writes go on, reads go to the server ---------------------

$r->freeze;
ok($a->do('UPDATE rs SET v = 100 WHERE id = 2'),
   'Redis frozen: a write succeeds all the same');
is(v($b, 2), 100, 'and the other host reads it from the server');
$st = $A->cache_stats('qc');
ok($st->{redis_strict_failed} >= 1,
   "the bump that timed out is counted ($st->{redis_strict_failed})");
$r->thaw;
