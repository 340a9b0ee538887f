#!/usr/bin/perl

# readwritesplit when the primary dies (issue 9, master_failure_mode):
# with fail_on_write (the default) a session that has a replica backend
# goes on reading, its writes get a clear ERR 1429 that says the
# statement did not run, and once the primary is back the session
# reopens it, replays its history there and writes again; with
# fail_instantly the session ends.  The primary is killed with SIGKILL
# and started again, so this test has a sandbox of its own.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Test::More;
use Sluice::Sandbox;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my $sb = Sluice::Test::_private_sandbox();
$sb->start;
my ($pport, $rport) = ($sb->port('primary'), $sb->port('replica'));

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server 127.0.0.1:$pport role=primary;
        server 127.0.0.1:$rport role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readwritesplit;
        upstream cluster;
        master_failure_mode fail_instantly;
    }
}
EOF
$t->run;
$t->plan(23);
$t->allow_log(qr/backend server .* lost/);

my $pid = $sb->admin_dbh('primary')->selectrow_array('SELECT @@server_id');
my $rid = $sb->admin_dbh('replica')->selectrow_array('SELECT @@server_id');
$sb->admin_dbh('primary')->do(
    'CREATE OR REPLACE TABLE test.fo (id INT PRIMARY KEY)');

sub where {
    my ($dbh, $sql) = @_;
    my $id = $dbh->selectrow_array($sql // 'SELECT @@server_id');
    return !defined $id ? 'error ' . ($dbh->err // '?')
         : $id == $pid ? 'primary' : $id == $rid ? 'replica' : "? $id";
}

my $d = $t->dbh;                            # fail_on_write
my $f = $t->dbh(port => $t->port(1));       # fail_instantly
my $g = $t->dbh;                            # never read: no replica
ok($d->do('SET @kept = 5'), 'state set before the failure');
is(where($d), 'replica', 'fail_on_write session: a replica backend');
is(where($f), 'replica', 'fail_instantly session: a replica backend');
ok($g->do('SET @x = 1'), 'a third session has only its primary backend');

my $old = $d->prepare('SELECT 2', { mariadb_server_prepare => 1 });
ok($old && $old->execute && $old->fetchrow_array == 2,
   'a server-side prepared statement before the failure');

my $off = length $t->error_log;
ok($sb->kill_server('primary'), 'the primary is killed (SIGKILL)');
ok(Sluice::Test::wait_for(sub {
       substr($t->error_log, $off) =~ /lost \(.*\): the session goes on/ },
       what => 'the proxy to notice'),
   'the log says the session goes on without its primary');
my @got = $d->selectrow_array('SELECT @kept, @@server_id');
is_deeply(\@got, [5, $rid], 'reads go on, on the replica, with the '
   . "session's state");
ok(!$d->do('INSERT INTO fo VALUES (1)'), 'a write fails');
is($d->err, 1429, 'with ERR 1429');
like($d->errstr, qr/primary server .* is not available: the statement was not run/,
     'which says the statement did not run');
my $new = $d->prepare('SELECT 3', { mariadb_server_prepare => 1 });
ok(!$new || !$new->execute, 'a statement prepared while the primary is away '
   . 'fails');
is($d->err, 1429, 'with ERR 1429');
undef $old;             # COM_STMT_CLOSE, which has no answer: dropped
is(scalar $d->selectrow_array('SELECT @kept'), 5,
   'closing a statement of the lost primary leaves the session in step');
ok(!defined $f->selectrow_array('SELECT 1'),
   'fail_instantly: the session is gone');
ok(!defined $g->selectrow_array('SELECT 1'),
   'a session without a replica backend is gone');

$sb->start_server('primary');
my $ok = Sluice::Test::wait_for(sub { $d->do('INSERT INTO fo VALUES (2)') },
    timeout => 20, what => 'a write to go through again');
ok($ok, 'once the primary is back, the session writes again');
@got = $d->selectrow_array(
    '/* sluice: route=primary */ SELECT @kept, @@server_id');
is_deeply(\@got, [5, $pid], 'on a new primary backend that was given the '
   . "session's history");
is(scalar $sb->admin_dbh('primary')->selectrow_array(
       'SELECT COUNT(*) FROM test.fo WHERE id = 2'), 1,
   'the row is on the primary');
like(substr($t->error_log, $off), qr/back on primary/,
     'the log says so');

# --- the replica's server killed under a read load ---------------------------
# autocommit reads in flight on it are retried on the primary, later ones
# go there while no replica can be opened: sysbench sees no error at all
SKIP: {
    my $bin = eval { Sluice::Sandbox::find_bin('sysbench') };
    skip 'no sysbench', 3
        unless $t->have($bin, 'no sysbench (contrib/deps.sh installs it)');
    my @c = ('--db-driver=mysql', '--mysql-db=test', '--tables=2',
             '--table-size=2000', '--mysql-ignore-errors=none');
    my $sock = $sb->socket('primary');
    my $prep = `$bin oltp_read_only @c --mysql-user=root --mysql-password= --mysql-socket=$sock prepare 2>&1`;
    die "sysbench prepare: $prep" if $?;
    my $r = $sb->admin_dbh('replica');
    Sluice::Test::wait_for(sub { (eval { $r->selectrow_array(
        'SELECT COUNT(*) FROM test.sbtest2') } // 0) == 2000 },
        timeout => 30, what => 'the tables on the replica');
    my $reads = sub { ($r->selectrow_array(
        "SHOW GLOBAL STATUS LIKE 'Com_select'"))[1] };
    my $before = $reads->();
    my $out = $t->testdir . '/sysbench.out';
    my $child = fork // die "fork: $!";
    if ($child == 0) {
        exec("$bin oltp_read_only @c --skip_trx=on --db-ps-mode=disable "
             . '--mysql-user=app --mysql-password=secret '
             . '--mysql-host=127.0.0.1 --mysql-port=' . $t->port(0)
             . " --threads=4 --time=6 run >$out 2>&1") or POSIX::_exit(127);
    }
    # the replica serves reads, then dies
    my $served = Sluice::Test::wait_for(sub { $reads->() - $before > 500 },
        what => 'reads on the replica');
    $sb->kill_server('replica');
    waitpid $child, 0;
    my $res = $t->read_file('sysbench.out') // '';
    ok($served, 'the replica served reads before it was killed');
    ok($? == 0 && $res =~ /ignored errors:\s+0\s/
       && $res =~ /reconnects:\s+0\s/,
       'sysbench oltp_read_only through the replica\'s death: no error')
        or diag($res);
    like($t->error_log, qr/runs on '[^']+' instead|dropped from the session/,
         'the log says what the proxy did');
    $sb->start_server('replica');
}
