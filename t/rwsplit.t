#!/usr/bin/perl

# readwritesplit, first step (issue 9): statements go to the primary or
# the replica by what they are and by the transaction state the servers
# report; session state reaches both backends and is replayed on a
# replica opened later; a session that wrote reads from the primary;
# hints; a session with no usable replica reads from the primary.  Which
# server answered is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');
my $py = '/usr/bin/python3';
$t->need(system($py, '-c', 'import MySQLdb') == 0,
         'no Python mysqlclient (contrib/deps.sh installs python3-mysqldb)');
my $other = $t->name . '_other';
$t->server_user($other, 'other-pw');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    user $other { password "other-pw"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    upstream alone {
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readwritesplit;
        upstream alone;
    }
}
EOF
$t->run;
$t->plan(38);

my $pid = $t->primary_dbh->selectrow_array('SELECT @@server_id');
my $rid = $t->replica_dbh->selectrow_array('SELECT @@server_id');
$t->primary_dbh->do('CREATE OR REPLACE TABLE rws (id INT PRIMARY KEY, v INT)');

sub where {
    my ($dbh, $sql) = @_;
    my $id = $dbh->selectrow_array($sql // 'SELECT @@server_id');
    return !defined $id ? 'error: ' . ($dbh->errstr // '?')
         : $id == $pid ? 'primary' : $id == $rid ? 'replica' : "? $id";
}

my $d = $t->dbh;
ok($d, 'logged in through readwritesplit') or diag($DBI::errstr);
is(where($d), 'replica', 'an autocommit SELECT goes to a replica');
is(where($d, 'SELECT @@server_id FOR UPDATE'), 'primary',
   'SELECT ... FOR UPDATE to the primary');
is(where($d, '/* sluice: route=primary */ SELECT @@server_id'), 'primary',
   'a hint sends a read to the primary');
is(where($d, 'SELECT @@server_id, LAST_INSERT_ID()'), 'primary',
   'LAST_INSERT_ID() to the primary');
# a stored function may write: the primary (once the replica has it too)
$t->primary_dbh->do('CREATE OR REPLACE FUNCTION test.rws_fn() RETURNS INT '
                    . 'DETERMINISTIC NO SQL RETURN 1');
wait_for(sub { $t->replica_dbh->selectrow_array(
    "SELECT COUNT(*) FROM information_schema.routines "
    . "WHERE routine_schema = 'test' AND routine_name = 'rws_fn'") },
    what => 'the function on the replica');
is(where($d, 'SELECT @@server_id, test.rws_fn()'), 'primary',
   'a SELECT calling a stored function to the primary');
is(where($d, 'SELECT @@server_id, CONCAT("a", "b")'), 'replica',
   'one calling built-ins only to a replica');

# session state on both backends
ok($d->do('SET @who = 42'), 'SET of a user variable');
is(scalar $d->selectrow_array('SELECT @who'), 42, 'read back (replica)');
is(scalar $d->selectrow_array('/* sluice: route=primary */ SELECT @who'),
   42, 'and on the primary');

# read-only transaction on the replica
$d->do('START TRANSACTION READ ONLY');
is(where($d), 'replica', 'inside START TRANSACTION READ ONLY: the replica');
$d->do('COMMIT');

# autocommit off: the primary
$d->do('SET autocommit = 0');
is(where($d), 'primary', 'with autocommit off: the primary');
$d->do('COMMIT');
$d->do('SET autocommit = 1');
is(where($d), 'replica', 'autocommit on again: the replica');

# a transaction the server reports, whatever the text
$d->do('BEGIN');
is(where($d), 'primary', 'inside BEGIN: the primary');
$d->do('ROLLBACK');

# a write, then reads from the primary (read-your-writes)
ok($d->do('INSERT INTO rws VALUES (1, 10)'), 'a write');
is(where($d), 'primary', 'after it, reads go to the primary');
is(scalar $d->selectrow_array('SELECT v FROM rws WHERE id = 1'), 10,
   'and see the write, whatever the replica has applied');

# a replica opened after session state: replayed
my $e = $t->dbh;
ok($e->do('SET @late = 7') && $e->do('USE mysql'),
   'state set before any replica backend');
is(where($e), 'replica', 'the first read opens the replica backend');
is(scalar $e->selectrow_array('SELECT @late, DATABASE()'), 7,
   'which has the user variable (replayed)');
is(($e->selectrow_array('SELECT @late, DATABASE()'))[1], 'mysql',
   'and the database (COM_INIT_DB replayed as USE)');

# statements that must run where the state is
{
    my $w = $t->dbh;
    $w->{mariadb_auto_reconnect} = 0;
    is(where($w, 'SELECT @@server_id, CONNECTION_ID()'), 'primary',
       'CONNECTION_ID() to the primary');
    is(where($w, "SELECT \@\@server_id, GET_LOCK('rws_lock', 0)"),
       'primary', 'GET_LOCK() to the primary');
    $w->do("SELECT RELEASE_LOCK('rws_lock')");
    # a warning on the replica, then SHOW WARNINGS: the same backend
    $w->selectrow_array("SELECT CAST('abc' AS INT), \@\@server_id");
    my $warn = $w->selectall_arrayref('SHOW WARNINGS');
    is(scalar @$warn, 1, 'SHOW WARNINGS after a read with a warning: the '
       . 'backend that ran it (the replica) shows it');
    $w->selectrow_array(
        'SELECT SQL_CALC_FOUND_ROWS @@server_id FROM mysql.user LIMIT 0');
    ok(scalar $w->selectrow_array('SELECT FOUND_ROWS()') > 0,
       'FOUND_ROWS() on the backend of the SELECT before');
    $w->do('UPDATE rws SET v = v + 1 WHERE id = 1');
    is(scalar $w->selectrow_array('SELECT ROW_COUNT()'), 1,
       'ROW_COUNT() after an UPDATE: the primary\'s count');
    ok($w->do('CREATE TEMPORARY TABLE rws_tmp (i INT)')
       && $w->do('INSERT INTO rws_tmp VALUES (1), (2)'),
       'a temporary table of the session');
    is(scalar $w->selectrow_array('SELECT COUNT(*) FROM rws_tmp'), 2,
       'reads of it run on the primary, where it is');
    is(where($w, 'SELECT @@server_id FROM rws_tmp LIMIT 1'), 'primary',
       'and every read of the session after it, too');
    $w->disconnect;
}

# no replica in the upstream: reads from the primary
my $a = $t->dbh(port => $t->port(1));
is(where($a), 'primary', 'no replica configured: reads from the primary');

# COM_CHANGE_USER: the replica backend was the old user's, and goes
$t->write_file('cu.py', <<'PY');
import sys, MySQLdb
c = MySQLdb.connect(host='127.0.0.1', port=int(sys.argv[1]), user='app',
                    passwd='secret', db='test', autocommit=True)
cur = c.cursor()
cur.execute('SELECT CURRENT_USER(), @@server_id')
print('%s %s' % cur.fetchone())
c.change_user(sys.argv[2], sys.argv[3], 'test')
cur = c.cursor()
cur.execute('SELECT CURRENT_USER(), @@server_id')
print('%s %s' % cur.fetchone())
PY
my @cu = `$py @{[ $t->testdir ]}/cu.py @{[ $t->port(0) ]} $other other-pw`;
chomp @cu;
is($cu[0], "app\@% $rid", 'app reads from the replica');
is($cu[1], "$other\@% $rid",
   'after change_user() the replica answers as the new user');

# sysbench through it: text and prepared, read-write and read-only
SKIP: {
    my $sb = eval { Sluice::Test::find_bin('sysbench') };
    skip 'no sysbench', 4
        unless $t->have($sb, 'no sysbench (contrib/deps.sh installs it)');
    # 8 x 20000 rows: 4 threads do not deadlock each other (fewer rows
    # do, through sluice or not), so any error at all fails the run
    my @c = ('--db-driver=mysql', '--mysql-db=test', '--tables=8',
             '--table-size=20000', '--mysql-ignore-errors=none');
    my $sock = $t->primary_socket;
    $t->primary_dbh->do("DROP TABLE IF EXISTS sbtest$_") for 1 .. 8;
    my $prep = `$sb oltp_read_write @c --mysql-user=root --mysql-password= --mysql-socket=$sock prepare 2>&1`;
    is($?, 0, 'sysbench prepare') or diag($prep);
    my $selects = sub { ($t->replica_dbh->selectrow_array(
        "SHOW GLOBAL STATUS LIKE 'Com_select'"))[1] };
    my $before = $selects->();
    my @run = ('--mysql-user=app', '--mysql-password=secret',
               '--mysql-host=127.0.0.1', '--mysql-port=' . $t->port(0),
               '--threads=4', '--time=3', 'run');
    my $rw = `$sb oltp_read_write @c --db-ps-mode=disable @run 2>&1`;
    ok($? == 0 && $rw =~ /ignored errors:\s+0\s/ && $rw =~ /reconnects:\s+0\s/,
       'oltp_read_write, text protocol: no error, no reconnect')
        or diag($rw);
    my $ps = `$sb oltp_read_write @c --db-ps-mode=auto @run 2>&1`;
    ok($? == 0 && $ps =~ /ignored errors:\s+0\s/ && $ps =~ /reconnects:\s+0\s/,
       'oltp_read_write, prepared statements: no error, no reconnect')
        or diag($ps);
    my $ro = `$sb oltp_read_only @c --db-ps-mode=disable --skip_trx=on @run 2>&1`;
    ok($? == 0 && $ro =~ /ignored errors:\s+0\s/
       && $selects->() - $before > 1000,
       'oltp_read_only, autocommit: no error, and the reads reached the '
       . 'replica') or diag($ro);
}

# sluice -t refuses auth passthrough
$t->write_file_expand('pt.conf', <<'EOF');
mysql {
    upstream c { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readwritesplit;
        upstream c;
        auth passthrough;
    }
}
EOF
my ($rc, $out) = $t->test_config(conf => 'pt.conf');
isnt($rc, 0, 'auth passthrough is refused');
like($out, qr/pt\.conf:\d+: .*does not support "auth passthrough"/,
     'with file:line')
    or diag($out);
