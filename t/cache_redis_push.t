#!/usr/bin/perl

# Pushed invalidations (issue 22): a host that cannot read the binlog
# learns the writes other hosts see through Redis pub/sub.  Host A reads
# the binlog (its reader bumps and publishes each commit once); host B
# does not, and runs a subscriber process.  A write straight to the
# primary, and one through A, reach B's zone within a deadline; B's own
# writes are not applied twice; a message that does not parse invalidates
# everything.  The subscriber killed, or Redis gone: B serves no zone hit
# (it says so) until the push is back, and then none older than the
# outage.

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
my $bl_pass = 'B1nlog-Push-5';
Sluice::Test::binlog_account($p, 'push_mon', $bl_pass);
$p->do("CREATE OR REPLACE TABLE test.rp_$_ (id INT PRIMARY KEY, v INT)")
    for qw(a b c);
$p->do("INSERT INTO test.rp_$_ VALUES (1, 10)") for qw(a b c);

my $conf = <<"EOF";
worker_processes 2;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    redis shared { server 127.0.0.1:$rport; timeout 200ms; }
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
        %%BINLOG%%
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_ttl 600s; cache_redis shared; }
}
EOF
(my $ca = $conf) =~ s/%%BINLOG%%/binlog on; binlog_user push_mon; binlog_password "$bl_pass";/;
(my $cb = $conf) =~ s/%%BINLOG%%//;
$A->write_file_expand('sluice.conf', $ca);
$B->write_file_expand('sluice.conf', $cb);
for my $t ($A, $B) { $t->run }
$A->plan(23);
$_->allow_log(qr/redis "shared": |binlog "db": /) for $A, $B;

sub push_stats { $_[0]->redis_stats('shared') }

ok(wait_for(sub { $A->grep_log(qr/binlog "db": live/) },
            what => 'A\'s reader live'), 'A reads the binlog');
ok(wait_for(sub { push_stats($B)->{subscriber} eq 'live' },
            what => 'B\'s subscriber live'),
   'B, without a binlog reader, runs a subscriber that is live');
is(push_stats($A)->{subscriber}, 'none', 'A needs none');
is(scalar $B->role_pids('redis_sub'), 1, 'one redis_sub process on B');

sub com_select { Sluice::Test::server_status($p, 'Com_select') }
my $a = $A->dbh;
my $b = $B->dbh;
sub v { my ($h, $t) = @_;
        return scalar $h->selectrow_array("SELECT v FROM rp_$t WHERE id = 1") }

# --- a direct write, a write through A ---------------------------------------

is(v($b, 'a'), 10, 'B caches rp_a');
my $c0 = com_select();
is(v($b, 'a'), 10, 'B hits');
is(com_select() - $c0, 0, '... from its zone');
$p->do('UPDATE rp_a SET v = 11 WHERE id = 1');
ok(wait_for(sub { v($b, 'a') == 11 }, what => 'B to see the direct write'),
   'a direct write reaches B\'s zone (A\'s reader published it)');
is(v($b, 'b'), 10, 'B caches rp_b');
$a->do('UPDATE rp_b SET v = 12 WHERE id = 1');
ok(wait_for(sub { v($b, 'b') == 12 }, what => 'B to see A\'s write'),
   'a write through A reaches B\'s zone');
$b->do('UPDATE rp_b SET v = 13 WHERE id = 1');
is(v($b, 'b'), 13, 'B reads its own write');
my $st = push_stats($B);
ok($st->{received} >= 2, "B applied pushed invalidations ($st->{received})");
ok(wait_for(sub { push_stats($B)->{own} >= 1 }, what => 'its own skipped'),
   'and skipped its own');
like($st->{latency_max_ms}, qr/^\d+$/, "publish-to-apply latency measured "
     . "(avg $st->{latency_avg_ms} ms, max $st->{latency_max_ms} ms)");

# --- garbage on the channel ---------------------------------------------------

is(v($b, 'c'), 10, 'B caches rp_c');
$r->cli('PUBLISH', 'sluice:inv', 'not a message');
ok(wait_for(sub { push_stats($B)->{bad} >= 1 }, what => 'the bad message'),
   'a message that does not parse is counted');
my $h0 = $B->cache_stats('qc')->{redis_hits};
is(v($b, 'c'), 10, 'B reads rp_c again');
is($B->cache_stats('qc')->{redis_hits} - $h0, 1,
   'and the zone had forgotten it (a Redis hit, its generations unmoved)');

# --- the subscriber killed ------------------------------------------------------

my ($sub) = $B->role_pids('redis_sub');
kill 'KILL', $sub;
ok(wait_for(sub { my ($n) = $B->role_pids('redis_sub');
                  $n && $n != $sub }, what => 'a new subscriber'),
   'a killed subscriber is replaced');
ok(wait_for(sub { $B->grep_log(qr/redis "shared": receiving invalidations \(the zones were invalidated/) },
            what => 'it to say so'),
   'the new one invalidates the zones: nothing came while none ran');

# --- Redis gone ----------------------------------------------------------------

$r->kill;
ok(wait_for(sub { $B->grep_log(qr/redis "shared": not receiving invalidations/) },
            what => 'the loss said'), 'Redis gone: B says it hears nothing');
$c0 = com_select();
is(v($b, 'c') . v($b, 'c'), '1010', 'B answers');
is(com_select() - $c0, 2, 'both from the server: no zone hit while the '
   . 'push is down');
