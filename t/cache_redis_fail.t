#!/usr/bin/perl

# The Redis tier when Redis fails (issue 22): clients never see it.
# Redis frozen (SIGSTOP): the first lookups time out, then the worker's
# breaker opens and lookups skip Redis, with no client error; a write
# straight to the primary meanwhile reaches the zone through the binlog
# reader, which marks the tables it could not bump in Redis and delivers
# the bump once Redis answers again, so another host never gets the
# pre-write entry from Redis; the breaker closes when Redis answers.
# Redis killed under four clients' reads, and restarted empty: no error,
# no stale answer.  The bound on a client's wait is counted (lookups that timed
# out), never timed.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Redis;
use POSIX ();

my $t = Sluice::Test->new;
Sluice::Redis->need($t, qw(cache cache_redis readconn));

my $r = Sluice::Redis->start(dir => $t->testdir);
my $rport = $r->port;
my $p = $t->primary_dbh;
my $bl_pass = 'B1nlog-Fail-3';
Sluice::Test::binlog_account($p, 'rfail_mon', $bl_pass);
$p->do('CREATE OR REPLACE TABLE test.rf (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.rf SELECT seq, seq * 10 FROM seq_1_to_300');
$p->do('CREATE OR REPLACE TABLE test.rf2 (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.rf2 VALUES (2, 20)');

my $conf = <<"EOF";
worker_processes %%WORKERS%%;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    redis shared { server 127.0.0.1:$rport; timeout 50ms; }
    redis denied { server 127.0.0.1:$rport; password "Wr0ng-Redis-Pw"; }
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
        %%BINLOG%%
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_ttl 600s; cache_redis shared; }
    %%DENIED%%
}
EOF
(my $ca = $conf) =~ s/%%WORKERS%%/2/;
$ca =~ s/%%DENIED%%/server { listen 127.0.0.1:%%PORT_1%%; router readconn;
             upstream db; filters cache; cache qc; cache_ttl 600s;
             cache_redis denied; }/;
$ca =~ s/%%BINLOG%%/binlog on; binlog_user rfail_mon; binlog_password "$bl_pass";/;
$t->write_file_expand('sluice.conf', $ca);
$t->run;
$t->plan(32);
$t->allow_log(qr/redis "(?:shared|denied)": |binlog "db": /);

ok(wait_for(sub { $t->grep_log(qr/binlog "db": live/)
                  && $t->grep_log(qr/redis "shared": connected/) == 2 },
            what => 'the reader live, both workers connected'),
   'the binlog reader is live and both workers are connected to Redis');

my $h = $t->dbh;
sub rd {
    my ($id) = @_;
    return scalar $h->selectrow_array("SELECT v FROM rf WHERE id = $id");
}
sub reads {
    my ($from, $to) = @_;
    my $bad = 0;
    for my $id ($from .. $to) {
        my $v = rd($id);
        $bad++ unless defined $v && $v == $id * 10;
    }
    return $bad;
}
sub com_select { Sluice::Test::server_status($p, 'Com_select') }

is(reads(1, 10), 0, 'ten rows read and kept (zone and Redis)');
is(scalar $h->selectrow_array('SELECT v FROM rf2 WHERE id = 2'), 20,
   'and a row of another table');
ok(wait_for(sub { ($r->cli('DBSIZE') // 0) >= 11 },
            what => 'the entries in Redis'), 'Redis holds them');

# --- a wrong password: the zone goes on -----------------------------------

ok(wait_for(sub { $t->grep_log(qr/redis "denied": AUTH: \S/) },
            what => 'the AUTH error'),
   'a wrong password is logged with Redis\' reason');
my $hd = $t->dbh(port => $t->port(1));
is(scalar $hd->selectrow_array('SELECT v FROM rf2 WHERE id = 2'), 20,
   'its server answers');
my $d0 = com_select();
is(scalar $hd->selectrow_array('SELECT v FROM rf2 WHERE id = 2'), 20,
   'and again');
is(com_select() - $d0, 0, 'from the zone: caching goes on in shared memory');

# --- frozen ---------------------------------------------------------------

$r->freeze;
is(reads(11, 60), 0, 'Redis frozen: 50 reads, none failed or wrong');
my $st = $t->cache_stats('qc');
ok($st->{redis_timeouts} >= 3,
   "the first lookups timed out ($st->{redis_timeouts})");
ok($st->{redis_timeouts} <= 6,
   'and only a few: the breaker opened after 3 (a client waits at most '
   . "the timeout, a few times) ($st->{redis_timeouts})");
ok($st->{redis_skipped} >= 40, "the others skipped Redis ($st->{redis_skipped})");
ok($st->{redis_breaker_opened} >= 1, 'the breaker opened (counted)');
ok($t->grep_log(qr/\[warn\].*redis "shared": no answer within its timeout: lookups skip it for \d+ ms/),
   'and said so');

# a write straight to the primary: the reader invalidates the zone, and
# cannot bump the generation in Redis
$p->do('UPDATE rf SET v = 11 WHERE id = 1');
ok(wait_for(sub { (rd(1) // 0) == 11 }, what => 'the write seen'),
   'a direct write is seen while Redis is frozen');
ok(wait_for(sub { $t->grep_log(qr/redis "shared": bumping generations: /) },
            what => 'the failed bump logged'),
   'the reader says it could not bump the generation in Redis');

$r->thaw;
my $next = 61;
ok(wait_for(sub { reads($next, $next); $next++;
                  $t->grep_log(qr/\[notice\].*redis "shared": answering again/) },
            timeout => 15, what => 'the breaker to close'),
   'Redis thawed: a probe closes the breaker');
sub delivered {
    return scalar(() = $t->grep_log(
        qr/redis "shared": the binlog reader delivered the generations/));
}
ok(wait_for(sub { delivered() == 1 }, what => 'the bump delivered'),
   'the reader delivered the bump it owed');

# another host, with an empty zone: Redis still holds the entry of before
# the write, stale by its generation
{
    my $B = Sluice::Test->new;
    (my $cb = $conf) =~ s/%%WORKERS%%/1/;
    $cb =~ s/%%BINLOG%%//;
    $cb =~ s/%%DENIED%%//;
    $B->write_file_expand('sluice.conf', $cb);
    $B->run;
    ok(wait_for(sub { $B->grep_log(qr/redis "shared": connected/) },
                what => 'B connected'), 'another host starts');
    my $hb = $B->dbh;
    my $c0 = com_select();
    is(scalar $hb->selectrow_array('SELECT v FROM rf2 WHERE id = 2'), 20,
       'B reads a row of a table not written, kept before the freeze');
    is(com_select() - $c0, 0, '... from Redis');
    is(scalar $hb->selectrow_array('SELECT v FROM rf WHERE id = 1'), 11,
       'B never gets the entry of before the write');
    $hb->disconnect;
    $B->stop;
}   # (B stopped, its logs checked: a `not ok` if anything is wrong)

# --- killed under reads, restarted empty ----------------------------------

# four clients reading while Redis dies under them
my $dir = $t->testdir;
my @kids;
for my $k (1 .. 4) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $c = $t->dbh;
        my ($n, $bad) = (0, 0);
        while ($n < 600) {
            my $id = 1 + ($n * 7 + $k * 13) % 300;
            my $v = $c ? $c->selectrow_array("SELECT v FROM rf WHERE id = $id")
                       : undef;
            $bad++ unless defined $v && ($v == $id * 10 || $id <= 3);
            $n++;
            if ($n % 20 == 0) {
                open(my $fh, '>', "$dir/load.$k.tmp") or POSIX::_exit(1);
                print $fh "$n $bad\n";
                close $fh;
                rename "$dir/load.$k.tmp", "$dir/load.$k";
            }
        }
        POSIX::_exit(0);
    }
    push @kids, $pid;
}
sub load { my @r; for my $k (1 .. 4) {
               open(my $fh, '<', "$dir/load.$k") or return ();
               push @r, [ split ' ', scalar <$fh> ] } return @r }
ok(wait_for(sub { my @r = load(); @r == 4 && !grep { $_->[0] < 40 } @r },
            what => 'the load under way'), 'four clients reading');
$r->kill;
waitpid($_, 0) for @kids;
my @res = load();
is(join(' ', map { "$_->[0]/$_->[1]" } @res), '600/0 600/0 600/0 600/0',
   'Redis killed under their reads: every read answered, none wrong');
is(reads(100, 140), 0, 'Redis killed: 41 reads more, none failed or wrong');
ok(wait_for(sub { $t->grep_log(qr/redis "shared": (?:connection lost|connect): /) },
            what => 'the loss logged'), 'the lost connection is logged');
$p->do('UPDATE rf SET v = 31 WHERE id = 3');
ok(wait_for(sub { (rd(3) // 0) == 31 }, what => 'the write seen'),
   'a direct write while Redis is down is seen');
my $conns = () = $t->grep_log(qr/redis "shared": connected/);
$r->restart;
ok(wait_for(sub { (() = $t->grep_log(qr/redis "shared": connected/))
                  >= $conns + 2 && delivered() == 2 }, timeout => 40,
            what => 'both workers back, the bump delivered'),
   'Redis restarted: both workers connect again, the reader delivers');
is(reads(141, 150), 0, 'reads go on');
is(rd(3), 31, 'no stale answer after the restart');
ok(wait_for(sub { ($r->cli('DBSIZE') // 0) >= 5 }, what => 'new entries'),
   'entries are stored in the new Redis');
$st = $t->cache_stats('qc');
ok($st->{redis_hits} + $st->{redis_misses} >= 10,
   'lookups answered again (hits ' . $st->{redis_hits} . ', misses '
   . $st->{redis_misses} . ')');
