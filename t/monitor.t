#!/usr/bin/perl

# The monitor: a process of its own ("sluice: monitor process"),
# restarted after SIGKILL and replaced on reload, that logs in to every
# server of an upstream with `monitor_user` (a real account with the
# least privilege: SLAVE MONITOR) and tells the workers through shared
# memory what it sees.  role=auto servers take the role seen; a primary
# that turns read_only, a replica whose SQL thread stops and a server
# that is down are followed within a few intervals, with no reload.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readconn');

# The sandbox is shared by the tests that follow: whatever happens here,
# the primary is writable and the replica replicates at the end.
my $restore = 0;
END {
    if ($restore) {
        eval { $t->primary_dbh->do('SET GLOBAL read_only = OFF') };
        eval { $t->replica_dbh->do("RESET SLAVE 'sluice_idle' ALL") };
        eval { $t->replica_dbh->do('START SLAVE') };
    }
}

my $mon_pass = 'M0n-Secret-42';
my $p = $t->primary_dbh;
$p->do("CREATE OR REPLACE USER 'sluice_mon'\@'%' IDENTIFIED BY ?", undef,
       $mon_pass);
$p->do("GRANT SLAVE MONITOR ON *.* TO 'sluice_mon'\@'%'");
# the account reaches the replica by replication
wait_for(sub {
    $t->replica_dbh->selectrow_array(
        "SELECT COUNT(*) FROM mysql.user WHERE user = 'sluice_mon'");
}, what => 'the monitor account on the replica');
$restore = 1;

my $primary_id = $p->selectrow_array('SELECT @@server_id');
my $replica_id = $t->replica_dbh->selectrow_array('SELECT @@server_id');

my $conf = <<"EOF";
worker_processes 1;
mysql {
    user app { password "secret"; }
    upstream cluster {
        monitor_user sluice_mon;
        monitor_password "$mon_pass";
        monitor_interval 200ms;
        monitor_connect_timeout 1s;
        server %%PRIMARY%% role=auto;
        server %%REPLICA%% role=auto;
    }
    upstream dead {
        monitor_user sluice_mon;
        monitor_password "$mon_pass";
        monitor_interval 200ms;
        server 127.0.0.1:%%PORT_9%% role=primary;
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        readconn_role primary;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        readconn_role replica;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        readconn_role primary;
        upstream dead;
    }
    upstream lagged {
        monitor_user sluice_mon;
        monitor_password "$mon_pass";
        monitor_interval 200ms;
        max_replication_lag 1s;
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        readconn_role replica;
        upstream lagged;
    }
}
EOF
$t->write_file_expand('sluice.conf', $conf);
$t->allow_log(qr/monitor/);
$t->run;
$t->plan(27);

my $P = $t->primary;
my $R = $t->replica;
my $dead = '127.0.0.1:' . $t->port(9);

# --- the process --------------------------------------------------------

my @mon;
ok(wait_for(sub { @mon = $t->role_pids('monitor'); @mon == 1 },
            what => 'the monitor process'),
   'one process titled "sluice: monitor process"');

kill 'KILL', $mon[0];
$t->allow_log(qr/\b$mon[0]\b/);
my @again;
ok(wait_for(sub { @again = $t->role_pids('monitor');
                  @again == 1 && $again[0] != $mon[0] },
            what => 'a new monitor'),
   'the monitor is started again after SIGKILL');

# --- roles seen -----------------------------------------------------------

sub logged {
    my ($re) = @_;
    return sub { $t->error_log =~ $re };
}

ok(wait_for(logged(qr{monitor: server "cluster/\Q$P\E" is now primary}),
            what => 'the primary seen'),
   'the log says the primary is primary');
ok(wait_for(logged(qr{monitor: server "cluster/\Q$R\E" is now replica}),
            what => 'the replica seen'),
   'the log says the replica is replica');

sub server_id {
    my ($port) = @_;
    my $dbh = $t->dbh(port => $t->port($port)) or return undef;
    return scalar $dbh->selectrow_array('SELECT @@server_id');
}

is(server_id(0), $primary_id, 'role=auto: readconn_role primary reaches '
   . 'the primary');
is(server_id(1), $replica_id, 'role=auto: readconn_role replica reaches '
   . 'the replica');

# --- a server that is down --------------------------------------------------

ok(wait_for(logged(qr{monitor: server "dead/\Q$dead\E" is down}),
            what => 'the dead server seen down'),
   'the monitor marks a server nothing listens on down');
my $off = length $t->error_log;
is(join(',', map { server_id(2) // 'fail' } 1 .. 4),
   join(',', ($primary_id) x 4), 'sessions go to the live server');
unlike(substr($t->error_log, $off), qr/backend failed.*\Q$dead\E/,
       'and none tries the server seen down');

# --- a primary turns read_only ---------------------------------------------

$p->do('SET GLOBAL read_only = ON');
ok(wait_for(sub { !defined server_id(0) }, timeout => 5,
            what => 'no primary'),
   'read_only=ON: readconn_role primary finds no primary, no reload');
like($DBI::errstr,
     qr/No backend server of upstream "cluster" is available as primary/,
     'the client is told why');
like($t->error_log, qr{monitor: server "cluster/\Q$P\E" is now none},
     'the log says the primary is no primary any more');
$p->do('SET GLOBAL read_only = OFF');
ok(wait_for(sub { (server_id(0) // 0) == $primary_id }, timeout => 5,
            what => 'the primary back'),
   'read_only=OFF: the primary is used again');

# --- a replica stops replicating -------------------------------------------

my $r = $t->replica_dbh;
$r->do('STOP SLAVE SQL_THREAD');
ok(wait_for(sub { !defined server_id(1) }, timeout => 5,
            what => 'the stopped replica left out'),
   'SQL thread stopped: readconn_role replica is refused');
like($t->error_log,
     qr{monitor: server "cluster/\Q$R\E": replication stopped},
     'the log says replication stopped');
is(server_id(0), $primary_id, 'the primary still serves');
$r->do('START SLAVE SQL_THREAD');
ok(wait_for(sub { (server_id(1) // 0) == $replica_id }, timeout => 5,
            what => 'the replica back'),
   'SQL thread started: the replica is used again');
like($t->error_log,
     qr{monitor: server "cluster/\Q$R\E": replication running},
     'the log says replication runs again');

# --- several replication connections (multi-source) ---------------------
# a second, named connection that does not run: SHOW ALL SLAVES STATUS
# shows it, and a replica counts as replicating only if all of them run
$r->do("CHANGE MASTER 'sluice_idle' TO MASTER_HOST='127.0.0.1', "
       . 'MASTER_PORT=' . $t->port(9) . ", MASTER_USER='nobody'");
ok(wait_for(sub { !defined server_id(1) }, timeout => 5,
            what => 'the replica with a stopped connection left out'),
   'a second replication connection that does not run: the replica is '
   . 'left out');
$r->do("RESET SLAVE 'sluice_idle' ALL");
ok(wait_for(sub { (server_id(1) // 0) == $replica_id }, timeout => 5,
            what => 'the replica back'),
   'that connection removed: the replica is used again');

# --- real lag ------------------------------------------------------------------
# the replica's SQL thread waits for a table a session holds locked there:
# Seconds_Behind_Master grows past max_replication_lag 1s
$p->do('CREATE OR REPLACE TABLE test.mon_lag (i INT)');
wait_for(sub { $r->selectrow_array(q{SELECT COUNT(*) FROM
    information_schema.tables WHERE table_name = 'mon_lag'}) },
    what => 'the table on the replica');
my $lock = $t->replica_dbh;
$lock->do('LOCK TABLES test.mon_lag WRITE');
$p->do('INSERT INTO test.mon_lag VALUES (1)');
ok(wait_for(sub { !defined server_id(3) }, timeout => 10,
            what => 'the lagging replica left out'),
   'a replica more than max_replication_lag behind is left out');
is(server_id(1), $replica_id,
   'while one without max_replication_lag still uses it');
$lock->disconnect;              # the lock goes with the connection
ok(wait_for(sub { (server_id(3) // 0) == $replica_id }, timeout => 10,
            what => 'the replica caught up'),
   'caught up: it is used again');

# --- reload -----------------------------------------------------------------

@mon = $t->role_pids('monitor');
ok($t->reload, 'reload');
ok(wait_for(sub { my @n = $t->role_pids('monitor');
                  @n == 1 && $n[0] != $mon[0] },
            what => 'the new monitor alone'),
   'a reload starts a new monitor and the old one exits');
# the state survives the reload: role=auto servers keep their role
is(server_id(0), $primary_id, 'after the reload, the primary at once');
is(server_id(1), $replica_id, 'and the replica');
