#!/usr/bin/perl

# A write's bump that cannot reach Redis is owed, not lost (issue 22,
# section 2, and the `queue` bound of section 1).  Two hosts that read no
# binlog (their invalidations come through Redis: the workers' bumps and
# pushes are all there is), host A with a small `queue` (4 KiB of
# unanswered stores and bumps per connection: 32 bumps).  Redis is frozen
# (SIGSTOP): A's writes still succeed at once; past the queue their bumps
# are dropped, counted, and owed: no process of A takes an entry of those
# tables from Redis meanwhile.  Once Redis is back A pays them, so host
# B, which cached the old answer in Redis before, never serves it again
# (without the marks its generation would never move: B would serve the
# old answer until its TTL, ten minutes).

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
$p->do("CREATE OR REPLACE TABLE test.ro_$_ (id INT PRIMARY KEY, v INT)")
    for qw(t u);
$p->do("INSERT INTO test.ro_$_ VALUES (1, 0)") for qw(t u);

my $conf = <<"EOF";
worker_processes 2;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    redis shared { server 127.0.0.1:$rport; timeout 200ms; %%QUEUE%% }
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        server %%PRIMARY%% role=primary;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_ttl 600s; cache_redis shared; }
}
EOF
(my $ca = $conf) =~ s/%%QUEUE%%/queue 4k;/;
(my $cb = $conf) =~ s/%%QUEUE%%//;
$A->write_file_expand('sluice.conf', $ca);
$B->write_file_expand('sluice.conf', $cb);
for my $t ($A, $B) {
    $t->run;
    $t->allow_log(qr/redis "shared": /);
}
$A->plan(12);

sub push_live {
    ($_[0]->redis_stats('shared')->{subscriber} // '') eq 'live';
}
for my $t ($A, $B) {
    ok(wait_for(sub { push_live($t) }, what => 'the subscriber live'),
       'host ' . ($t == $A ? 'A' : 'B') . ': its subscriber is live');
}

sub com_select { Sluice::Test::server_status($p, 'Com_select') }
my $a = $A->dbh;
my $b = $B->dbh;
sub v { my ($h, $t) = @_;
        return scalar $h->selectrow_array("SELECT v FROM ro_$t WHERE id = 1") }

# --- B caches ro_t in Redis ----------------------------------------------------

is(v($b, 't'), 0, 'B reads ro_t');
ok(wait_for(sub { ($r->cli('--scan', '--pattern', 'sluice:e:*') // '')
                  =~ /\S/ }, what => 'the entry in Redis'),
   'and its entry goes to Redis');

# --- Redis frozen: A's writes go on, their bumps past the queue are owed -----

$r->freeze;
my @err;
for my $i (1 .. 40) {
    $a->do("UPDATE ro_u SET v = $i WHERE id = 1") or push @err, $a->errstr;
}
$a->do('UPDATE ro_t SET v = 1 WHERE id = 1') or push @err, $a->errstr;
is("@err", '', '41 writes through A while Redis is frozen: no error');
my $st = $A->cache_stats('qc');
ok($st->{redis_dropped} >= 9,
   "bumps past the 4 KiB queue dropped and counted ($st->{redis_dropped})");
ok($st->{redis_bumps} <= 33, "at most the queue's worth sent "
   . "($st->{redis_bumps})");
is(v($a, 't'), 1, 'A reads its write (the server answers)');

# --- Redis back: A pays what it owes, B never serves the old answer -----------

$r->thaw;
ok(wait_for(sub { v($b, 't') == 1 }, what => 'B to see the write'),
   'Redis back: B reads the write, not the entry it cached before');
my $c0 = com_select();
is(v($b, 't'), 1, 'B reads it again');
ok(wait_for(sub { my $c = com_select(); v($b, 't'); com_select() == $c },
            what => 'a hit'), 'and caches the new answer');
is(v($a, 'u'), 40, 'A reads ro_u: its last write');
