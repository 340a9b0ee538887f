#!/usr/bin/perl

# The Redis tier on a Redis Cluster (issue 22, section 3): three masters
# started by the harness.  Host A says `cluster on` (strict mode: every
# hit is Redis', every write's OK waits for its bump); host B says
# nothing (the cluster is detected) and runs in the default mode, its
# zone kept right by the subscriber's pushes.  Entries spread over the
# nodes by their own slots, the generations live on one node (their hash
# tag), a lookup asks both; an entry stored through A is a Redis hit on
# B; writes through A reach B's zone by pub/sub across the nodes.  Then
# the generations' slot is moved by hand (CLUSTER SETSLOT, MIGRATE key by
# key) while reads and writes go on: bumps follow ASK to the node that
# has their key already, lookups follow ASK when it has them all, and
# MOVED once the slot is there (the map refreshed); then a resharding of
# 4000 slots by redis-cli under reads and writes: no client error, no
# stale answer.  A also reads the binlog: its reader's script finds the
# generations' node by MOVED, before and after the slots moved.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use POSIX ();
use Sluice::Test;
use Sluice::Redis;

my $A = Sluice::Test->new;
Sluice::Redis->need($A, qw(cache cache_redis readconn));
my $B = Sluice::Test->new;

my @n = Sluice::Redis->cluster(dir => $A->testdir, nodes => 3);
my @ports = map { $_->port } @n;
my $p = $A->primary_dbh;
$p->do('CREATE OR REPLACE TABLE test.rcl (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.rcl VALUES ' . join ', ', map { "($_, 0)" } 1 .. 30);
my $bl_pass = 'B1nlog-Cluster-5';
Sluice::Test::binlog_account($p, 'rcl_mon', $bl_pass);

my $conf = <<"EOF";
worker_processes 2;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    redis shared { %%REDIS%% }
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        server %%PRIMARY%% role=primary;
        %%BINLOG%%
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_ttl 600s; cache_redis shared; }
}
EOF
(my $ca = $conf) =~ s/%%REDIS%%/server 127.0.0.1:$ports[0]; server 127.0.0.1:$ports[1]; cluster on; strict on; timeout 1s;/;
$ca =~ s/%%BINLOG%%/binlog on; binlog_user rcl_mon; binlog_password "$bl_pass";/;
(my $cb = $conf) =~ s/%%REDIS%%/server 127.0.0.1:$ports[2]; timeout 1s;/;
$cb =~ s/%%BINLOG%%//;
$A->write_file_expand('sluice.conf', $ca);
$B->write_file_expand('sluice.conf', $cb);
for my $t ($A, $B) {
    $t->run;
    $t->allow_log(qr/redis "shared": |binlog "db": /);
}
$A->plan(26);

for my $t ($A, $B) {
    ok(wait_for(sub { $t->grep_log(qr/redis "shared": connected to \S+ \(a cluster\)/) == 2 },
                what => 'both workers on the cluster'),
       ($t == $A ? 'A (cluster on)' : 'B (detected)')
       . ': both workers see a cluster');
}
is(scalar $B->role_pids('redis_sub'), 1, 'B runs a subscriber');
ok(wait_for(sub { $A->grep_log(qr/binlog "db": live/) },
            what => 'A\'s reader live'), 'A reads the binlog');

sub com_select { Sluice::Test::server_status($p, 'Com_select') }
my $a = $A->dbh;
my $b = $B->dbh;
sub v { my ($h, $id) = @_;
        return scalar $h->selectrow_array("SELECT v FROM rcl WHERE id = $id") }
# the keys under the prefix on node $i matching $pat
sub keys_on { my ($i, $pat) = @_;
              return grep { length } split /\n/,
                  $n[$i]->cli('--scan', '--pattern', $pat) // '' }
sub entries { return map { scalar keys_on($_, 'sluice:e:*') } 0 .. $#n }

# --- entries spread, generations on one node, B hits what A stored ----------

my @bad = grep { (v($a, $_) // -1) != 0 } 1 .. 30;
is("@bad", '', 'A reads 30 rows (the server answers)');
ok(wait_for(sub { my $s = 0; $s += $_ for entries(); $s == 30 },
            what => 'the 30 entries in the cluster'),
   '30 entries stored in the cluster');
my @e = entries();
is(scalar(grep { $_ > 0 } @e), 3, "spread over the three nodes (@e)");
my ($gslot) = $n[0]->cli('CLUSTER', 'KEYSLOT', 'sluice:{g}:*') =~ /(\d+)/;
my @g = map { scalar keys_on($_, 'sluice:{g}:*') } 0 .. $#n;
is(scalar(grep { $_ > 0 } @g), 1, "the generations on one node (@g)");
my $c0 = com_select();
@bad = grep { (v($b, $_) // -1) != 0 } 1 .. 30;
is("@bad", '', 'B reads the 30 rows');
is(com_select() - $c0, 0, 'all from Redis: the server saw none');
ok($B->cache_stats('qc')->{redis_hits} >= 30, 'B counts them as Redis hits');

# --- writes: A's reads at once, B's zone by the push ------------------------

$a->do('UPDATE rcl SET v = 1 WHERE id = 1');
is(v($a, 1), 1, 'A reads its write at once (strict)');
ok(wait_for(sub { v($b, 1) == 1 }, what => 'B to see A\'s write'),
   'B\'s zone drops the old entry (pushed across the nodes)');

# a write straight to the primary: A's binlog reader bumps it in the
# cluster (its script follows MOVED to the generations' node) and
# publishes it
$p->do('UPDATE rcl SET v = 2 WHERE id = 30');
ok(wait_for(sub { v($a, 30) == 2 && v($b, 30) == 2 },
            what => 'both hosts to see the direct write'),
   'a direct write reaches both hosts (the reader\'s bump and push)');
my $pub0 = $A->grep_log(qr/bumping generations: /);
is($pub0, 0, 'the reader had no failure to report');

# --- the generations' slot moved by hand -------------------------------------

my ($src) = grep { $g[$_] } 0 .. $#n;
my $dst = ($src + 1) % @n;
sub node_id { (split ' ', $n[$_[0]]->cli('CLUSTER', 'MYID'))[0] }
my ($sid, $did) = (node_id($src), node_id($dst));
my ($tkey) = grep { !/\*$/ } keys_on($src, 'sluice:{g}:*');
$n[$dst]->cli('CLUSTER', 'SETSLOT', $gslot, 'IMPORTING', $sid);
$n[$src]->cli('CLUSTER', 'SETSLOT', $gslot, 'MIGRATING', $did);

my $val = 1;
my @wrong;
# a write through A, read on A at once and on B within a deadline
sub round {
    my ($what, $id) = @_;
    $val++;
    $a->do("UPDATE rcl SET v = $val WHERE id = $id")
        or push @wrong, "$what: write: " . $a->errstr;
    my $got = v($a, $id) // 'undef';
    push @wrong, "$what: A read $got, not $val" if $got ne $val;
    wait_for(sub { (v($b, $id) // -1) == $val }, what => "B, $what")
        or push @wrong, "$what: B stale";
}
round('migrating, no key moved', 2);
my $f0 = $A->cache_stats('qc')->{redis_strict_failed};
like($n[$src]->cli('MIGRATE', '127.0.0.1', $ports[$dst], $tkey, 0, 5000),
     qr/OK/, 'the table\'s generation migrated alone');
my $asked = sub { (split /\n/, `printf 'ASKING\nGET $tkey\n' | redis-cli -p $ports[$dst]`)[1] // '' };
my $g0 = $asked->();
round('the generation moved, every-table one not', 2);
ok($asked->() > $g0, 'the write\'s bump followed ASK to the new node');
is($A->cache_stats('qc')->{redis_strict_failed} - $f0, 0,
   'and was acknowledged there');
like($n[$src]->cli('MIGRATE', '127.0.0.1', $ports[$dst], '', 0, 5000,
                   'KEYS', keys_on($src, 'sluice:{g}*')),
     qr/OK/, 'the other generations migrated');
# a read the server does not see (A's binlog reader bumps each commit
# again after the worker did: the read after it is a miss, the next a hit)
sub redis_hit {
    my ($id) = @_;
    return wait_for(sub {
        my $c = com_select();
        my $got = v($a, $id) // 'undef';
        push @wrong, "A read $got, not $val" if $got ne $val;
        com_select() == $c }, what => 'a Redis hit');
}
round('every generation moved, slot still migrating', 3);
ok(redis_hit(3), 'a Redis hit: the lookup followed ASK');
for my $i (0 .. $#n) {
    $n[$i]->cli('CLUSTER', 'SETSLOT', $gslot, 'NODE', $did);
}
round('the slot moved', 4);
ok(wait_for(sub { $A->grep_log(qr/redis "shared": slot $gslot moved to 127\.0\.0\.1:$ports[$dst]/) },
            what => 'the MOVED'), 'a MOVED refreshed the slot map (logged)');
ok(redis_hit(4), 'a Redis hit from the new node');

# --- a resharding under reads and writes -------------------------------------

my $from = node_id(($dst + 1) % @n);
my $log = $A->testdir . '/reshard.log';
my $pid = fork // die "fork: $!";
if ($pid == 0) {
    open(STDOUT, '>', $log);
    open(STDERR, '>&', \*STDOUT);
    { exec('redis-cli', '--cluster', 'reshard', "127.0.0.1:$ports[0]",
         '--cluster-from', $from, '--cluster-to', $did, '--cluster-slots',
         4000, '--cluster-yes', '--cluster-pipeline', 5) }
    POSIX::_exit(127);
}
my $rounds = 0;
while (waitpid($pid, POSIX::WNOHANG()) == 0) {
    round("resharding, round $rounds", 5 + $rounds % 25);
    my $id = 1 + int(rand(30));
    defined v($a, $id) or push @wrong, "read $id: " . $a->errstr;
    defined v($b, $id) or push @wrong, "read $id on B: " . $b->errstr;
    $rounds++;
}
is($?, 0, 'redis-cli moved 4000 slots');
ok($rounds >= 3, "while $rounds rounds of writes and reads went on");
is("@wrong", '', 'no client error, no stale answer on either host');
$p->do('UPDATE rcl SET v = 3 WHERE id = 30');
ok(wait_for(sub { v($a, 30) == 3 && v($b, 30) == 3 },
            what => 'both hosts to see the direct write'),
   'after it, a direct write still reaches both hosts');
