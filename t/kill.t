#!/usr/bin/perl

# KILL through sluice acts on the session the client named.  The thread id
# a client sees in its greeting is sluice's session id (unique across
# workers, never in the range a server gives its own connections); a
# `KILL [QUERY|CONNECTION] <id>` or COM_PROCESS_KILL naming it is sent to
# the backend as a KILL of that session's backend thread, from any
# connection on any worker, as the requesting user (the server's own
# permission rules apply).  The mariadb client's Ctrl-C (which sends
# KILL QUERY <greeting id> on a new connection) stops the running query.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Time::HiRes qw(time);
use Test::More;
use Sluice::Test;
use Sluice::Sandbox qw(find_bin);
use Sluice::Wire qw(read_packet send_packet raw_login raw_connect
                    parse_greeting read_err);

my $t = Sluice::Test->new;
$t->has('readconn');

my $other = $t->name . '_other';
$t->server_user($other, 'other-pw');
my $p = $t->primary_dbh;

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
events { worker_connections 64; }
mysql {
    user app { password "secret"; }
    user $other { password "other-pw"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
        auth passthrough;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        readconn_role replica;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        readconn_role replica;
        upstream cluster;
        auth passthrough;
    }
    upstream capped {
        server %%PRIMARY%% role=primary max_connections=1;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_4%%;
        router readconn;
        upstream capped;
    }
    server {
        listen 127.0.0.1:%%PORT_5%%;
        router readconn;
        readconn_role replica;
        upstream capped;
    }
}
EOF
$t->run;
$t->plan(33);

# A session whose greeting id we know, running SLEEP(secs) asynchronously.
sub sleeper {
    my (%o) = @_;
    my $dbh = $t->dbh(port => $o{port} // $t->port(0),
                      user => $o{user} // 'app',
                      password => $o{password} // 'secret') or return;
    my $id = $dbh->{mariadb_thread_id};
    my $sth = $dbh->prepare("SELECT SLEEP($o{secs})", { mariadb_async => 1 });
    $sth->execute;
    return { dbh => $dbh, sth => $sth, id => $id, t0 => time };
}

# Wait for the sleeper's statement to end; its elapsed time and result.
sub finish {
    my ($s, $timeout) = @_;
    wait_for(sub { $s->{sth}->mariadb_async_ready }, timeout => $timeout);
    my $r = $s->{sth}->mariadb_async_result;
    my $row = defined $r ? $s->{sth}->fetchrow_arrayref : undef;
    return (time - $s->{t0}, $row ? $row->[0] : undef, $s->{dbh}->err);
}

# Wait until the server runs the sleeper's statement (its backend thread
# is in the processlist with the SLEEP).
sub running {
    my ($secs, $port_dbh) = @_;
    my $d = $port_dbh // $p;
    return wait_for(sub {
        $d->selectrow_array("SELECT COUNT(*) FROM information_schema"
            . ".processlist WHERE info = 'SELECT SLEEP($secs)'") }, what =>
        "SELECT SLEEP($secs) to run");
}

# --- ids ----------------------------------------------------------------

my $a = $t->dbh;
my $b = $t->dbh;
ok($a && $b, 'two sessions through sluice');
cmp_ok($a->{mariadb_thread_id}, '>=', 0x80000000,
    "the greeting's thread id is in sluice's range (above 2^31)");
isnt($a->{mariadb_thread_id}, $b->{mariadb_thread_id}, 'and unique');
my $backend_id = $a->selectrow_array('SELECT CONNECTION_ID()');
cmp_ok($backend_id, '<', 0x80000000,
    "CONNECTION_ID() is the backend's own id (documented)");

# --- KILL QUERY from a second connection, both forms -------------------

my $s = sleeper(secs => 7.1);
ok(running(7.1), 'a session runs SELECT SLEEP(7.1)');
ok($b->do("KILL QUERY $s->{id}"), 'KILL QUERY <greeting id> from another '
    . 'session: OK');
my ($el, $v) = finish($s, 10);
cmp_ok($el, '<', 5, "the sleeper's query stopped at once")
    or diag "elapsed $el";
is($s->{dbh}->selectrow_array('SELECT 7'), 7,
    'KILL QUERY left its session alive');

# COM_PROCESS_KILL (what mysql_kill() sends) names a connection
$s = sleeper(secs => 7.2);
ok(running(7.2), 'another sleeper runs');
my $raw = raw_login($t->port(0));
my (undef, $ok) = read_packet($raw);
send_packet($raw, 0, "\x0c" . pack('V', $s->{id}));
my ($seq, $ans) = read_packet($raw);
is(defined $ans ? ord $ans : -1, 0, 'COM_PROCESS_KILL <greeting id>: OK');
($el) = finish($s, 10);
cmp_ok($el, '<', 5, 'the connection was killed at once');
ok(!$s->{dbh}->ping, 'and its client finds it closed');

# --- the ids do not collide with the server's ---------------------------

# A direct session on the primary runs a query too: only the one named
# stops, whatever numbers the two ids have.
my $direct = $t->dbh(port => $t->primary_port);
my $dsth = $direct->prepare('SELECT SLEEP(6.3)', { mariadb_async => 1 });
$dsth->execute;
my $t0 = time;
$s = sleeper(secs => 6.4);
ok(running(6.3) && running(6.4), 'a direct and a proxied session run');
$b->do("KILL QUERY $s->{id}");
($el) = finish($s, 10);
cmp_ok($el, '<', 5, 'the proxied one stopped');
ok(!$dsth->mariadb_async_ready, 'the direct one still runs');
$p->do("KILL QUERY $direct->{mariadb_thread_id}");
$dsth->mariadb_async_result;
undef $dsth;

# An id below the range is a server's own: it goes on unchanged, so a
# session can cancel with the id it read from CONNECTION_ID().
ok($b->do("KILL QUERY $backend_id"), 'KILL QUERY <a CONNECTION_ID() value> '
    . 'goes to the server as it is') or diag $b->errstr;

# --- the server's own permission rules ----------------------------------

$s = sleeper(secs => 6.5);
ok(running(6.5), 'a sleeper of app runs');
my $o = $t->dbh(user => $other, password => 'other-pw');
ok(!$o->do("KILL QUERY $s->{id}") && $o->err == 1095,
    "another user may not kill app's query (server's ERR 1095)")
    or diag $o->errstr;
$b->do("KILL QUERY $s->{id}");
finish($s, 10);

# --- an unknown id ---------------------------------------------------------

ok(!$b->do('KILL QUERY 4294967000') && $b->err == 1094,
    'an id of the range that names no session: ERR 1094');

# --- any worker, and passthrough -----------------------------------------

# With two workers, KILL from a session of the other worker: find one by
# the pid in the log lines of its id.
sub worker_of {
    my ($id) = @_;
    my ($l) = $t->grep_log(qr/\*\Q$id\E accepted/) or return 0;
    return $l =~ /\] (\d+): / ? $1 : 0;
}
$s = sleeper(secs => 6.6);
running(6.6);
my $killer;
for (1 .. 20) {
    my $k = $t->dbh or next;
    if (worker_of($k->{mariadb_thread_id}) != worker_of($s->{id})) {
        $killer = $k;
        last;
    }
}
ok($killer && $killer->do("KILL QUERY $s->{id}"),
    'KILL QUERY from a session of the other worker');
($el) = finish($s, 10);
cmp_ok($el, '<', 5, 'stops the query');

# A session whose backend is on another server (the replica) cannot carry
# the KILL: sluice sends it through a side connection to the target's
# server, logged in as the requesting user, and closes that at once.
my $apps = sub { $p->selectrow_array("SELECT COUNT(*) FROM "
    . "information_schema.processlist WHERE user = 'app'") };
$s = sleeper(secs => 6.8);
running(6.8);
my $r = $t->dbh(port => $t->port(2));
my $n0 = $apps->();
is($r && $r->selectrow_array('SELECT @@port'), $t->replica_port,
   'a session on the replica');
ok($r && $r->do("KILL QUERY $s->{id}"), 'KILL QUERY of a session on the '
   . 'primary from it: OK') or diag $r && $r->errstr;
($el) = finish($s, 10);
cmp_ok($el, '<', 5, 'stops the query on the primary');
ok($t->grep_log(qr/through a side connection/), 'through a side connection');
# (<=: a session of an earlier step may end meanwhile; the side
# connection is one more than n0 while it lasts)
ok(wait_for(sub { $apps->() <= $n0 }, what => 'the side connection to go'),
   'the side connection is closed (as many app sessions on the primary as '
   . 'before)');
is($r->selectrow_array('SELECT 5'), 5, 'the requesting session goes on');

# Under auth passthrough sluice cannot log in as the client: it says so.
$s = sleeper(secs => 6.9);
running(6.9);
my $pr = $t->dbh(port => $t->port(3));
ok($pr && !$pr->do("KILL QUERY $s->{id}") && $pr->err == 1095
    && $pr->errstr =~ /auth passthrough/,
    'passthrough, another server: ERR 1095 that says why')
    or diag $pr && $pr->errstr;
$b->do("KILL QUERY $s->{id}");
finish($s, 10);

# The side connection takes a max_connections slot like any other: with
# the target's server full, the KILL is refused with ERR 1040, not carried
# past the limit.
$s = sleeper(secs => 6.95, port => $t->port(4));
running(6.95);
my $rc = $t->dbh(port => $t->port(5));
ok($rc && !$rc->do("KILL QUERY $s->{id}") && $rc->err == 1040
    && $rc->errstr =~ /max_connections/,
    'target server at max_connections: the side connection is refused, '
    . 'ERR 1040') or diag $rc && $rc->errstr;
$b->do("KILL QUERY $s->{id}");
finish($s, 10);

# --- the mariadb client's Ctrl-C ------------------------------------------

# The client, on SIGINT during a query, connects again and sends
# KILL QUERY <the thread id of its greeting>.
my $cli = find_bin('mariadb', 'mysql');
my $pid = fork // die "fork: $!";
if ($pid == 0) {
    open STDOUT, '>', $t->testdir . '/cli.out';
    open STDERR, '>&', \*STDOUT;
    no warnings 'exec';
    exec $cli, '--no-defaults', '-h', '127.0.0.1', '-P', $t->port(0),
        '--protocol=tcp', '-u', 'app', '--password=secret', '-N', '-B',
        '-e', 'SELECT SLEEP(8.9)';
    POSIX::_exit(127);
}
ok(running(8.9), 'the mariadb client runs SELECT SLEEP(8.9)');
$t0 = time;
kill 'INT', $pid;
my $gone = wait_for(sub { waitpid($pid, POSIX::WNOHANG()) == $pid },
    timeout => 12);
cmp_ok(time - $t0, '<', 4, "Ctrl-C stops the query at once")
    or diag $t->read_file('cli.out');
ok(!$p->selectrow_array("SELECT COUNT(*) FROM information_schema"
    . ".processlist WHERE info = 'SELECT SLEEP(8.9)'"),
    'and the server no longer runs it');

$s = sleeper(secs => 6.7, port => $t->port(1));
ok($s && $s->{id} >= 0x80000000 && running(6.7)
    && $b->do("KILL QUERY $s->{id}") && (finish($s, 10))[0] < 5,
    'a passthrough session is named and killed the same way');
