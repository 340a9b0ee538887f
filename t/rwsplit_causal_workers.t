#!/usr/bin/perl

# readwritesplit, causal_reads global across workers: a client that has
# the OK of a write reads on another connection, served by the other
# worker, and must see the write.  What broke: the GTID of the write went
# into the zone of global in the router's done hook, which runs once the
# client has been sent the OK; a read on the other worker in between went
# to the replica, which had not applied the write (contrib/bench/run
# --causal, web mix, 2 workers: 16 stale reads of 10 500).
#
# The writer's worker is held there, as a worker preempted at that point
# would be: the test filter blocks it in its done hook, which runs after
# the client has the response and before the router's.  The replica's
# applier is held back by a LOCK TABLES ... READ while the monitor keeps
# the replica in.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('testfilter', 'readwritesplit');

my $mon_pass = 'M0n-Workers-3';
my $p = $t->primary_dbh;
$p->do("CREATE OR REPLACE USER 'sluice_mon'\@'%' IDENTIFIED BY ?", undef,
       $mon_pass);
$p->do("GRANT SLAVE MONITOR ON *.* TO 'sluice_mon'\@'%'");
$p->do('CREATE OR REPLACE TABLE causal_workers (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO causal_workers VALUES (1, 0)');
my $r = $t->replica_dbh;
# the table may not have reached the replica yet: an error is a no
wait_for(sub { eval {
    $r->selectrow_array('SELECT COUNT(*) FROM causal_workers')
    && $r->selectrow_array("SELECT COUNT(*) FROM mysql.user "
                           . "WHERE user = 'sluice_mon'");
} }, what => 'the table and the monitor account on the replica');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream watched {
        monitor_user sluice_mon;
        monitor_password "$mon_pass";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream watched;
        filters testfilter;
        causal_reads global;
    }
}
EOF
$t->run;
$t->plan(8);

my $pid = $p->selectrow_array('SELECT @@server_id');
my $rid = $r->selectrow_array('SELECT @@server_id');

# where a read of row 1 ran, and what it saw: "replica 0", "primary 1"
sub read_of {
    my ($dbh) = @_;
    my ($sid, $v) = $dbh->selectrow_array(
        'SELECT @@server_id, v FROM causal_workers WHERE id = 1');
    return 'error: ' . ($dbh->errstr // '?') unless defined $sid;
    return ($sid == $pid ? 'primary' : $sid == $rid ? 'replica' : "? $sid")
        . " $v";
}

sub worker_of { scalar $_[0]->selectrow_array('/*tf:pid*/') }

my $w = $t->dbh;
ok($w, 'the writer logs in') or diag($DBI::errstr);
my $wpid = worker_of($w);
# SO_REUSEPORT spreads sessions over the workers by their ports
my $o;
for (1 .. 30) {
    my $c = $t->dbh or next;
    if (worker_of($c) != $wpid) {
        $o = $c;
        last;
    }
}
ok($o, "a session on the other worker than the writer's ($wpid)")
    or BAIL_OUT('no session on the other worker');
ok(wait_for(sub { read_of($o) eq 'replica 0' }, timeout => 10,
            what => 'a read on the replica'),
   'it reads from the replica, which the monitor sees up to date');

my $locker = $t->replica_dbh;
$locker->do('LOCK TABLES causal_workers READ');
ok($w->do('/*tf:stall 3000*/ UPDATE causal_workers SET v = 1 WHERE id = 1'),
   'a write, replica held back; its worker blocked once the client has '
   . 'the OK');
my $t0 = time;
is(read_of($o), 'primary 1', 'at once, the read on the other worker sees '
   . 'it: the primary, the replica has not applied it');
cmp_ok(time - $t0, '<', 2, 'while the writer\'s worker was still held');
$locker->do('UNLOCK TABLES');
undef $locker;

like(read_of($w), qr/^(?:primary|replica) 1\z/, 'the writer, once its '
   . 'worker is back, reads its write');
ok(wait_for(sub { read_of($o) eq 'replica 1' }, timeout => 10,
            what => 'the read back on the replica'),
   'back to the replica once it has applied the write');
