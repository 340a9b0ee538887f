#!/usr/bin/perl

# The Redis tier serving (issue 22): two sluice hosts, 2 workers each,
# one Redis.  A result stored through A is a Redis hit on B (the server's
# Com_select does not move) and is then a zone hit there; a write through
# B, or straight to the primary, is never followed by the old answer on
# either host (each host's binlog reader invalidates its zone, and the
# tables' generations in Redis make the shared entry stale); a missing
# generation (Redis flushed) makes an entry stale; garbage or another
# key's value under the prefix is a miss, never served.  Counters in
# `sluice -s stats`.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $A = Sluice::Test->new;
$A->has('cache', 'cache_redis', 'readconn');
$A->need((grep { -x "$_/redis-cli" } split /:/, $ENV{PATH}),
         'redis-cli is not in PATH (contrib/deps.sh installs it)');
my $B = Sluice::Test->new;

my $rport = $A->redis_port;
my $prefix = "sluice:tier$$:";
my $p = $A->primary_dbh;
my $bl_pass = 'B1nlog-Tier-9';
Sluice::Test::binlog_account($p, 'tier_mon', $bl_pass);
$p->do("CREATE OR REPLACE TABLE test.rt_$_ (id INT PRIMARY KEY, v INT)")
    for qw(a b c d);
$p->do("INSERT INTO test.rt_$_ VALUES (1, 10), (2, 20)") for qw(a b c d);

sub redis { my $cmd = shift; return scalar qx{redis-cli -h 127.0.0.1 -p $rport $cmd @_} }

for my $t ($A, $B) {
    $t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    redis shared { server 127.0.0.1:$rport; prefix "$prefix";
                   timeout 200ms; }
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
        binlog on;
        binlog_user tier_mon; binlog_password "$bl_pass";
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_ttl 600s; cache_redis shared; }
}
EOF
    $t->run;
}
$A->plan(28);
$_->allow_log(qr/redis "shared": /) for $A, $B;

for my $t ($A, $B) {
    ok(wait_for(sub { $t->grep_log(qr/binlog "db": live/)
                      && $t->grep_log(qr/redis "shared": connected/) },
                what => 'the reader live, Redis connected'),
       'binlog reader live and Redis connected on ' . ($t == $A ? 'A' : 'B'));
}

sub com_select { Sluice::Test::server_status($p, 'Com_select') }

# one connection per host, reused: hits may come from either worker
my $a = $A->dbh;
my $b = $B->dbh;

sub v { my ($h, $sql) = @_; my $r = $h->selectrow_array($sql);
        return $r // 'undef: ' . ($h->errstr // '') }

# --- a result stored through A is a Redis hit on B ------------------------

my $q = 'SELECT v FROM rt_a WHERE id = 1';
my $c0 = com_select();
is(v($a, $q), 10, 'A: a miss, answered by the server');
ok(wait_for(sub { redis('--scan', '--pattern', "'${prefix}e:*'") =~ /e:/ },
            what => 'the entry in Redis'), 'A stored the entry in Redis');
is(com_select() - $c0, 1, 'the server answered A once');
$c0 = com_select();
is(v($b, $q), 10, 'B: the same statement');
is(com_select() - $c0, 0, 'B was answered from Redis: the server saw nothing');
is(v($b, $q), 10, 'B again');
is(com_select() - $c0, 0, '... from its zone, or Redis');
my $st = $B->cache_stats('qc');
ok($st->{redis_hits} >= 1, "B counts its Redis hit ($st->{redis_hits})");

# --- a write through B: neither host serves the old answer ----------------

$b->do('UPDATE rt_a SET v = 11 WHERE id = 1');
is(v($b, $q), 11, 'B reads its own write');
ok(wait_for(sub { v($a, $q) == 11 }, what => 'A to see the write'),
   'A sees the write through B (its reader invalidated its zone)');
$c0 = com_select();
is(v($a, $q), 11, 'A: the new answer again');
is(v($b, $q), 11, 'B: the new answer again');

# --- a write straight to the primary --------------------------------------

my $q2 = 'SELECT v FROM rt_b WHERE id = 2';
is(v($a, $q2), 20, 'A caches rt_b');
is(v($b, $q2), 20, 'B gets it');
$p->do('UPDATE rt_b SET v = 21 WHERE id = 2');
ok(wait_for(sub { v($a, $q2) == 21 && v($b, $q2) == 21 },
            what => 'both hosts to see the direct write'),
   'a write straight to the primary reaches both hosts');

# --- Redis flushed: a missing generation is stale -------------------------

my $q3 = 'SELECT v FROM rt_c WHERE id = 1';
is(v($a, $q3), 10, 'A caches rt_c');
ok(wait_for(sub { redis('--scan', '--pattern', "'${prefix}e:*'")
                  =~ tr/\n// >= 3 }, what => 'three entries'),
   'its entry is in Redis');
# the generations gone (evicted, or lost in a restart that kept the
# entries): every entry is stale
my @gens = split /\n/, redis('--scan', '--pattern', "'${prefix}\\{g\\}:*'");
ok(@gens >= 4, 'the generations are under the prefix (' . @gens . ')');
redis('DEL', map { "'$_'" } @gens);
$c0 = com_select();
is(v($b, $q3), 10, 'B reads rt_c');
is(com_select() - $c0, 1, 'from the server: its generation is missing');
ok(redis('EXISTS', "'${prefix}\{g\}:*'") =~ /^1/,
   'the missing generations were created again');

# --- garbage under the prefix ---------------------------------------------

my $q4 = 'SELECT v FROM rt_d WHERE id = 2';
is(v($a, $q4), 20, 'A caches rt_d');
my @e = split /\n/, redis('--scan', '--pattern', "'${prefix}e:*'");
redis('SET', "'$_'", 'garbage') for @e;
$c0 = com_select();
is(v($b, $q4), 20, 'B: garbage in Redis is a miss, the server answers');
is(com_select() - $c0, 1, '... the server did');
$st = $B->cache_stats('qc');
ok($st->{redis_decode_errors} >= 1,
   "counted as a decode error ($st->{redis_decode_errors})");
ok($B->grep_log(qr/redis "shared": a value under "\Q$prefix\Ee:[0-9a-f]{32}" is not an entry/),
   'and logged, with the key');

redis('DEL', map { "'$_'" }
      split /\n/, redis('--scan', '--pattern', "'${prefix}*'"));
