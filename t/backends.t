#!/usr/bin/perl

# Several backends per session, through the test router
# (t/modules/testsplit, built with ./configure --with-test-modules): a
# session has its own primary backend, and a replica backend the router
# opens on first use and keeps; each follows its own commands (the
# router's done callback counts them).  When the replica backend fails the
# router, not the core, decides what the client hears, and the session
# goes on on the primary: a replica that cannot be reached (ERR 1429), a
# replica connection killed while idle (reopened on next use), one lost
# with a command in flight (ERR 1927), and one lost in the middle of a
# response, which ends the session since nothing can be said cleanly.
# A session command goes to both backends, the primary's reply alone to
# the client, and is replayed on a backend opened later; a backend that
# refuses its copy is dropped, and a command waiting for it gets an ERR.
# A reload hands the session over with both of its backends.  Closing the session closes both backends.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::FakeBackend;
use Sluice::Wire qw(greeting_of);

my $t = Sluice::Test->new;
$t->has('testsplit');

my $greeting = greeting_of($t->primary_port)
    // die("no greeting from the primary\n");
# a replica that logs in, reads the first command and hangs up
my $silent = Sluice::FakeBackend->new(port => $t->port(8),
    greeting => $greeting, script => [ 'login', 'read', 'close' ]);
# one that starts a result set, then hangs up
my $partial = Sluice::FakeBackend->new(port => $t->port(9),
    greeting => $greeting,
    script => [ 'login', 'read', [ 'packet', 1, "\x01" ], 'close' ]);

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    upstream dead {
        server %%PRIMARY%% role=primary;
        server 127.0.0.1:%%PORT_7%% role=replica;
    }
    upstream silent {
        server %%PRIMARY%% role=primary;
        server 127.0.0.1:%%PORT_8%% role=replica;
    }
    upstream partial {
        server %%PRIMARY%% role=primary;
        server 127.0.0.1:%%PORT_9%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router testsplit;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router testsplit;
        upstream dead;
        connect_timeout 2s;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router testsplit;
        upstream silent;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router testsplit;
        upstream partial;
    }
}
EOF
$t->allow_log(qr/\[error\].*(?:backend failed|connect\(\) to|Connection refused)/);
$t->run;
$t->plan(44);

my $pid = $t->primary_dbh->selectrow_array('SELECT @@server_id');
my $rid = $t->replica_dbh->selectrow_array('SELECT @@server_id');
isnt($pid, $rid, 'the sandbox servers have distinct server_id');

sub stats {
    my ($dbh) = @_;
    return scalar $dbh->selectrow_array('/*split:stats*/') // 'no answer';
}

# replica connections of user app on the replica, by the server's count
sub replica_conns {
    return scalar $t->replica_dbh->selectrow_array(q{SELECT COUNT(*) FROM
        information_schema.processlist WHERE user = 'app'});
}

# --- two backends ------------------------------------------------------------

my $dbh = $t->dbh;
ok($dbh, 'logged in through testsplit') or diag($DBI::errstr);
is(scalar $dbh->selectrow_array('SELECT @@server_id'), $pid,
   'a plain query goes to the primary');
is(replica_conns(), 0, 'no replica backend before it is needed');
is(scalar $dbh->selectrow_array('/*replica*/ SELECT @@server_id'), $rid,
   'a /*replica*/ query goes to the replica backend');
my $c1 = $dbh->selectrow_array('/*replica*/ SELECT CONNECTION_ID()');
my $c2 = $dbh->selectrow_array('/*replica*/ SELECT CONNECTION_ID()');
is($c1, $c2, 'the replica backend is kept for the session');
is(replica_conns(), 1, 'one replica connection');
$dbh->do('SET @where = "primary"');
is(scalar $dbh->selectrow_array('SELECT @where'), 'primary',
   'the primary backend kept its session state meanwhile');
like(stats($dbh), qr/ replica=3 opened=1 lost=0 copies_failed=0$/,
     'the router heard each replica response complete');

# a pipeline alternating backends: answers in order
my @got = map { scalar $dbh->selectrow_array($_) }
    ('SELECT @@server_id', '/*replica*/ SELECT @@server_id',
     'SELECT @@server_id');
is("@got", "$pid $rid $pid", 'alternating backends answer in order');

# --- a command to every backend ---------------------------------------------

ok($dbh->do('/*all*/ SET @both = 7'), 'a session command to both backends');
is(scalar $dbh->selectrow_array('SELECT @both'), 7, 'the primary has it');
is(scalar $dbh->selectrow_array('/*replica*/ SELECT @both'), 7,
   'the replica too (its copy was answered before this query ran)');
# a copy the replica refuses (a table only the primary has: dropped on
# the replica without binlog), in a session of its own; the primary's
# reply is the client's
$t->primary_dbh->do('CREATE TABLE IF NOT EXISTS split_only (i INT)');
$t->wait_for(sub { $t->replica_dbh->selectrow_array(q{SELECT COUNT(*) FROM
    information_schema.tables WHERE table_name = 'split_only'}) },
    what => 'the table to replicate');
$t->replica_dbh->do('SET sql_log_bin = 0');
$t->replica_dbh->do('DROP TABLE split_only');
my $x = $t->dbh;
$x->selectrow_array('/*replica*/ SELECT 1');
ok($x->do('/*all*/ SET @n = (SELECT COUNT(*) FROM split_only)'),
   'the primary answers the client');
# the client has the primary's answer; the replica's may come a moment
# later
ok($t->wait_for(sub { stats($x) =~ / copies_failed=1$/ },
                what => 'the replica to refuse its copy'),
   'the router heard the replica refuse its copy') or diag(stats($x));
ok($t->wait_for(sub { $t->grep_log(qr/replica backend .* lost: it refused/) },
                what => 'the replica backend to be dropped'),
   'and dropped that backend');
ok(!$x->do('/*replica*/ SELECT 5') && $x->err == 1927,
   'the next replica backend cannot replay that history either: ERR 1927 '
   . 'for the read that waited for it') or diag($x->errstr);
is(scalar $x->selectrow_array('SELECT 6'), 6, 'and the session goes on');
$x->disconnect;
# IF EXISTS: the replica has none, and replication must not stop on it
$t->primary_dbh->do('DROP TABLE IF EXISTS split_only');
my $sql_running = sub {
    my $st = $t->replica_dbh->selectrow_hashref('SHOW SLAVE STATUS');
    return $st && $st->{Slave_SQL_Running} eq 'Yes'
           && $t->replica_dbh->selectrow_array(q{SELECT COUNT(*) = 0 FROM
                  information_schema.tables WHERE table_name = 'split_only'});
};
ok($t->wait_for($sql_running, what => 'replication to go on'),
   'replication goes on (the sandbox is shared)');

# a backend opened later gets the session's history first
my $late = $t->dbh;
ok($late->do('/*all*/ SET @h = 3') && $late->do('/*all*/ SET @h2 = @h + 1'),
   'session commands before any replica backend is open');
is(scalar $late->selectrow_array('/*replica*/ SELECT @h, @h2'), 3,
   'a replica backend opened later has them: replayed before the query');
is(scalar $late->selectrow_array('/*replica*/ SELECT @h2'), 4,
   'in order');
ok($t->grep_log(qr/replica backend .* ready, replaying 2 command/),
   'the log says what was replayed');
$late->disconnect;

# --- the replica backend fails, the session goes on --------------------------

$c1 = $dbh->selectrow_array('/*replica*/ SELECT CONNECTION_ID()');
my $lost = () = $t->grep_log(qr/testsplit: replica backend .* lost/);
$t->replica_dbh->do("KILL CONNECTION $c1");
ok($t->wait_for(sub { (() = $t->grep_log(
                    qr/testsplit: replica backend .* lost/)) > $lost },
                what => 'the router to hear the replica connection go'),
   'a replica connection killed while idle: the router hears it');
is(scalar $dbh->selectrow_array('SELECT 1'), 1,
   'the session goes on on the primary');
my $c3 = $dbh->selectrow_array('/*replica*/ SELECT CONNECTION_ID()');
ok($c3 && $c3 != $c1, 'the next replica query opens a new replica backend');
like(stats($dbh), qr/ opened=2 lost=1 copies_failed=0$/,
     'opened twice, lost once');

my $d = $t->dbh(port => $t->port(1));
ok($d, 'logged in where the replica is unreachable');
ok(!$d->do('/*replica*/ SELECT 1'), 'a replica query fails');
is($d->err, 1429, "with ERR 1429 (Can't connect)") or diag($d->errstr);
is(scalar $d->selectrow_array('SELECT 2'), 2, 'and the session goes on');

my $s = $t->dbh(port => $t->port(2));
ok(!$s->do('/*replica*/ SELECT 1'),
   'the replica hangs up with the command in flight');
is($s->err, 1927, 'ERR 1927 (Lost connection)') or diag($s->errstr);
is(scalar $s->selectrow_array('SELECT 3'), 3, 'and the session goes on');

my $p = $t->dbh(port => $t->port(3));
ok(!$p->do('/*replica*/ SELECT 1'),
   'the replica hangs up in the middle of a response');
ok($t->wait_for(sub { $t->grep_log(
        qr/backend failed in the middle of a response/) },
        what => 'the session to close'),
   'that ends the session: nothing can be said cleanly');

# --- a reload hands the session over with both backends ------------------

my $rc = $dbh->selectrow_array('/*replica*/ SELECT CONNECTION_ID()');
my $pc = $dbh->selectrow_array('SELECT CONNECTION_ID()');
$dbh->do('/*all*/ SET @carried = 9');
my ($old) = $t->worker_pids;
ok($t->reload, 'reload');
ok($t->wait_for(sub { !kill(0, $old) }, what => 'the old worker to go'),
   'the old worker handed its sessions over and exited');
is(scalar $dbh->selectrow_array('SELECT CONNECTION_ID()'), $pc,
   'after the reload: the same primary connection');
is(scalar $dbh->selectrow_array('/*replica*/ SELECT CONNECTION_ID()'), $rc,
   'and the same replica connection: it came along');
is(scalar $dbh->selectrow_array('/*replica*/ SELECT @carried'), 9,
   'with its session state');
like(stats($dbh), qr/ opened=1 lost=0 /,
     'the new worker\'s router took it as its replica backend');

# --- closing ---------------------------------------------------------------

ok(replica_conns() >= 1, 'a replica connection is open');
$dbh->disconnect;
ok($t->wait_for(sub { replica_conns() == 0 },
                what => 'the replica connection to close'),
   'closing the session closes its replica backend too');
$_->disconnect for $d, $s;
