#!/usr/bin/perl

# The cache filter in front of readwritesplit (issue 10): a replica's
# answer is kept only when the monitor knew, before the read went out,
# that the replica held every write its tables saw.  A replica held back
# (its SQL thread stopped by a LOCK TABLES ... READ it waits on) answers
# with rows older than a write the proxy has seen: that answer is passed
# on (replication lag, as without a cache) but never kept, so once the
# replica has caught up nothing stale comes out of the cache.  A replica
# the monitor has not seen since its tables were written (a monitor that
# checked once, at the start) is never kept.  A write whose client hangs
# up before its answer still invalidates (the server commits it anyway).
# Prepared statements through readwritesplit: a replica's answer to an
# EXECUTE is kept the same way, and a write invalidates it.
# Whether a server answered is told by its Com_select.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_login packet read_packet);

my $t = Sluice::Test->new;
$t->has('cache', 'readwritesplit');

# whatever happens, the replica replicates at the end
my $locker;
END { eval { $locker->do('UNLOCK TABLES') } if $locker }

my $mon_pass = 'M0n-Cache-3';
my $p = $t->primary_dbh;
$p->do("CREATE OR REPLACE USER 'sluice_mon'\@'%' IDENTIFIED BY ?", undef,
       $mon_pass);
$p->do("GRANT SLAVE MONITOR, SHOW VIEW, TRIGGER ON *.* TO 'sluice_mon'\@'%'");
$p->do('CREATE OR REPLACE TABLE test.cr (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.cr VALUES (1, 1), (2, 1)');
my $r = $t->replica_dbh;
wait_for(sub {
    $r->selectrow_array('SELECT COUNT(*) FROM test.cr') == 2
    && $r->selectrow_array("SELECT COUNT(*) FROM mysql.user "
                           . "WHERE user = 'sluice_mon'");
}, what => 'the table and the monitor account on the replica');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    upstream watched {
        monitor_user sluice_mon;
        monitor_password "$mon_pass";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    upstream plain {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 1h;    # seen once, at the start: never in step
                                # with a write made since
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream watched;
        causal_reads off;
        filters cache;
        cache qc;
        cache_ttl 60s;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readwritesplit;
        upstream plain;
        filters cache;
        cache qc;
        cache_ttl 60s;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        upstream plain;
        filters cache;
        cache qc;
        cache_ttl 60s;
    }
}
EOF
$t->run;
$t->plan(24);

# the monitor's first load of each upstream's schema catalog invalidates
# the whole zone (a catalog that changed): the reads below start after
# both, so that nothing they keep is invalidated under them
wait_for(sub { $t->grep_log(qr/upstream "plain": schema catalog loaded/)
               && $t->grep_log(qr/upstream "watched": schema catalog loaded/)
         }, what => 'both upstreams\' schema catalogs');

sub com_select { Sluice::Test::server_status($_[0], 'Com_select') }

# [value read, reads the replica served, reads the primary served]
sub read_v {
    my ($dbh, $q) = @_;
    my ($r0, $p0) = (com_select($r), com_select($p));
    my ($v) = $dbh->selectrow_array($q);
    return [$v, com_select($r) - $r0, com_select($p) - $p0];
}

my $q1 = 'SELECT v FROM cr WHERE id = 1';
my $d = $t->dbh(port => $t->port(0));
ok($d, 'logged in (readwritesplit, monitor, cache)') or diag($DBI::errstr);

# --- in step: kept ------------------------------------------------------

# the monitor needs a check of each server before it knows the replica
# holds the primary's position: until then the answer passes, not kept
my $got;
ok(wait_for(sub { $got = read_v($d, $q1); $got->[1] == 0 && $got->[2] == 0 },
            what => 'a read served from the cache'),
   'a replica in step: its answer is kept, the next read is a hit');
is($got->[0], 1, 'with the row');
is_deeply(read_v($d, 'SELECT v FROM cr WHERE id = 2 AND 3 = 3'), [1, 1, 0],
          'a new read goes to the replica');
is_deeply(read_v($d, 'SELECT v FROM cr WHERE id = 2 AND 3 = 3'), [1, 0, 0],
          'and is kept at once (the monitor already knew)');

# --- held back: passed on, never kept -----------------------------------

$locker = $t->replica_dbh;
$locker->do('LOCK TABLES test.cr READ');      # the SQL thread waits on it
my $st0 = $t->cache_stats('qc');
ok($d->do('UPDATE cr SET v = 2 WHERE id = 1'), 'a write through the proxy');
is(($p->selectrow_array('SELECT v FROM test.cr WHERE id = 1'))[0], 2,
   'on the primary');
is_deeply(read_v($d, $q1), [1, 1, 0], 'the read after it: the replica, '
          . 'behind, answers with the old row (replication lag)');
is_deeply(read_v($d, $q1), [1, 1, 0], 'which is not kept: the next read '
          . 'goes to the replica again');
my $st1 = $t->cache_stats('qc');
cmp_ok($st1->{replica} - ($st0->{replica} // 0), '>=', 2,
       'counted as not stored: replica');

$locker->do('UNLOCK TABLES');
undef $locker;
ok(wait_for(sub { $r->selectrow_array('SELECT v FROM test.cr WHERE id = 1')
                  == 2 }, what => 'the replica to apply the write'),
   'the replica catches up');
ok(wait_for(sub { $got = read_v($d, $q1); $got->[1] == 0 && $got->[2] == 0 },
            what => 'a read served from the cache again'),
   'in step again: kept again');
is($got->[0], 2, 'and what the cache serves is the new row, never the old');

# --- prepared statements through readwritesplit ---------------------------

sub execs { Sluice::Test::server_status($_[0], 'Com_stmt_execute') }
# [value read, EXECUTEs the replica ran, EXECUTEs the primary ran]
sub exec_v {
    my ($sth, $id) = @_;
    my ($r0, $p0) = (execs($r), execs($p));
    $sth->execute($id);
    my ($v) = $sth->fetchrow_array;
    $sth->finish;
    return [$v, execs($r) - $r0, execs($p) - $p0];
}
my $dp = $t->dbh(port => $t->port(0), mariadb_server_prepare => 1);
my $sth = $dp->prepare('SELECT v FROM cr WHERE id = ? AND 6 = 6');
my $pg;
ok(wait_for(sub { $pg = exec_v($sth, 1); $pg->[1] == 0 && $pg->[2] == 0 },
            what => 'a prepared read served from the cache'),
   'readwritesplit, server-side prepared: a replica\'s answer is kept');
is($pg->[0], 2, 'with the row');
is_deeply(exec_v($sth, 2), [1, 1, 0], 'another parameter: the replica, '
          . 'which has the statement and its types');
is_deeply(exec_v($sth, 2), [1, 0, 0], 'then a hit');
ok($dp->do('UPDATE cr SET v = 4 WHERE id = 2'), 'a write');
my $stale_hits = 0;
ok(wait_for(sub {
    $pg = exec_v($sth, 2);
    my $hit = $pg->[1] + $pg->[2] == 0;
    $stale_hits++ if $hit && $pg->[0] != 4;
    return $hit && $pg->[0] == 4;
}, what => 'the new row kept'), 'invalidated: the new row, then kept again '
   . 'once the replica is in step');

is($stale_hits, 0, 'the cache never served the old row meanwhile');

# --- not seen since the writes: never kept --------------------------------

my $n = $t->dbh(port => $t->port(1));
read_v($n, 'SELECT v FROM cr WHERE id = 2 AND 4 = 4');
is_deeply(read_v($n, 'SELECT v FROM cr WHERE id = 2 AND 4 = 4'), [4, 1, 0],
          'a replica not seen in step since the table\'s writes: its answer '
          . 'is never kept');

# --- a write whose client hung up ----------------------------------------

my $c = $t->dbh(port => $t->port(2));
my $q2 = 'SELECT v FROM cr WHERE id = 2 AND 5 = 5';
read_v($c, $q2);
is_deeply(read_v($c, $q2), [4, 0, 0], 'readconn to the primary: kept');
my $s = raw_login($t->port(2));
my (undef, $ok) = read_packet($s);
# the server is still running it when the proxy closes the session; it
# commits it all the same
syswrite($s, packet(0, "\x03UPDATE test.cr SET v = 3 + SLEEP(0.3) * 0 "
                       . 'WHERE id = 2'));
close $s;
ok(wait_for(sub { $p->selectrow_array('SELECT v FROM test.cr WHERE id = 2')
                  == 3 }, what => 'the write committed'),
   'a write whose client hung up before its answer commits');
is(read_v($c, $q2)->[0], 3, 'and still invalidates the entry');
