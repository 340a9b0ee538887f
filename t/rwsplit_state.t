#!/usr/bin/perl

# readwritesplit (issue 9): the session history (session_history_max,
# later SETs of a variable replacing earlier ones, SET x = DEFAULT
# replayed as DEFAULT), the history going along with a reload's handover,
# max_replica_connections, and an autocommit read that a replica fails
# retried on the primary (retry_failed_reads) without the client hearing
# of it.  A replica backend is made to reopen (and so to be given the
# history) by killing its connection on the replica; which server
# answered is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::FakeBackend;
use Sluice::Test;
use Sluice::Wire qw(err_packet);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

# accounts of this test's own, so that their connections on the replica
# are the test's sessions' replica backends
my $u = $t->name . '_h';
my $v = $t->name . '_r';
$t->server_user($u, 'h-pw');
$t->server_user($v, 'r-pw');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
worker_shutdown_timeout 10s;
events { worker_connections 100; }
mysql {
    user $u { password "h-pw"; }
    user $v { password "r-pw"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream cluster;
        session_history_max 12;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readwritesplit;
        upstream cluster;
        max_replica_connections 0;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readwritesplit;
        upstream cluster;
        retry_failed_reads off;
    }
    upstream twice {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
        server localhost:@{[ $t->replica_port ]} role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_6%%;
        router readwritesplit;
        upstream twice;
        max_replica_connections 2;
    }
    upstream stopping {
        server %%PRIMARY%% role=primary;
        server 127.0.0.1:%%PORT_4%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readwritesplit;
        upstream stopping;
    }
}
EOF
# a replica that answers the read with "shutting down" and goes away
my $fake = Sluice::FakeBackend->new(port => $t->port(4), script => [
    'greeting', 'login',
    [ ok_until => qr/SLEEP/, err_packet(1053, '08S01',
                                        'Server shutdown in progress') ],
    'close' ]);
$t->run;
$t->plan(37);

my $pid = $t->primary_dbh->selectrow_array('SELECT @@server_id');
my $rid = $t->replica_dbh->selectrow_array('SELECT @@server_id');
my $r = $t->replica_dbh;

sub where {
    my ($dbh, $sql) = @_;
    my $id = $dbh->selectrow_array($sql // 'SELECT @@server_id');
    return !defined $id ? 'error: ' . ($dbh->errstr // '?')
         : $id == $pid ? 'primary' : $id == $rid ? 'replica' : "? $id";
}

# The replica connections of account $who (its sessions' replica backends).
sub replica_ids {
    my ($who) = @_;
    return @{ $r->selectcol_arrayref(
        'SELECT id FROM information_schema.processlist WHERE user = ?',
        undef, $who) };
}

# Kill account $who's replica backend and wait until the proxy has
# dropped it, so that the next read opens a new one.
sub kill_replica_backend {
    my ($who) = @_;
    my $off = length $t->error_log;
    my @ids = replica_ids($who);
    return 0 unless @ids == 1;
    $r->do("KILL CONNECTION $ids[0]");
    return Sluice::Test::wait_for(sub {
        substr($t->error_log, $off) =~ /replica \S+ dropped from the session/
    }, what => 'the proxy to drop the killed replica backend');
}

my $d = $t->dbh(user => $u, password => 'h-pw');
ok($d, 'logged in') or diag($DBI::errstr);
is(where($d), 'replica', 'a read opens the replica backend');

# --- a later SET of the same variable replaces the earlier one ---------
# (the driver sets a few variables itself at connect: 12 leaves room)
ok(!grep({ !$d->do("SET \@a = $_") } 1 .. 30),
   'the same variable set 30 times');
ok(kill_replica_backend($u), 'the replica backend is killed and dropped');
my @got = $d->selectrow_array('SELECT @a, @@server_id');
is_deeply(\@got, [30, $rid], 'the next read opens another replica backend '
   . 'and @a was replayed with its last value: the 30 SETs took one entry');
ok(!grep({ !$d->do("SET \@x$_ = $_") } 1 .. 20),
   '20 distinct variables: more than session_history_max 12');
ok(kill_replica_backend($u), 'the replica backend is killed and dropped');
is(where($d), 'primary', 'the history overflowed: no new replica backend, '
   . 'reads go to the primary');
like($t->error_log, qr/session_history_max reached/, 'the log says why');

my $e = $t->dbh(user => $u, password => 'h-pw');
$e->do('SET @a = 1');
$e->do('SET SESSION max_join_size = 1000');
$e->do("SET \@a = $_") for 2 .. 30;
$e->do('SET max_join_size = DEFAULT');
my $default = $t->primary_dbh->selectrow_array(
    'SELECT @@global.max_join_size');
is(where($e), 'replica', 'second session: the replica');
ok(kill_replica_backend($u), 'its replica backend is killed and dropped');
@got = $e->selectrow_array('SELECT @a, @@max_join_size, @@server_id');
is($got[2], $rid, 'the next read opens another replica backend');
is($got[0], 30, 'replayed: the last value of @a');
is($got[1], $default, 'SET max_join_size = DEFAULT replayed as DEFAULT');
$d->disconnect;
$e->disconnect;

# --- the history goes along with a reload's handover -----------------
my $h = $t->dbh(user => $u, password => 'h-pw');
$h->do('SET @carried = 42');
is(where($h), 'replica', 'a session with history reads from the replica');
my $off = length $t->error_log;
ok($t->reload, 'reload');
ok(Sluice::Test::wait_for(sub {
       substr($t->error_log, $off) =~ /handed over by process index/ },
       what => 'the handover'), 'the session was handed over');
ok(kill_replica_backend($u), 'then its replica backend is killed');
@got = $h->selectrow_array('SELECT @carried, @@server_id');
is_deeply(\@got, [42, $rid],
          'a new replica backend got the history that came with the '
          . 'handover (before, such a session read from the primary)');
$h->disconnect;

# --- max_replica_connections 0 --------------------------------------------
my $z = $t->dbh(user => $u, password => 'h-pw', port => $t->port(1));
is(where($z), 'primary', 'max_replica_connections 0: reads go to the '
   . 'primary');
$z->disconnect;

# --- max_replica_connections 2 --------------------------------------------
# the upstream names the replica twice (two servers to the router)
{
    my $two = $t->dbh(user => $u, password => 'h-pw', port => $t->port(6));
    ok($two->do('SET @two = 22'), 'max_replica_connections 2: state set');
    my @r = map { join ' ', $two->selectrow_array('SELECT @two, @@server_id')
                } 1 .. 4;
    is("@r", join(' ', ("22 $rid") x 4), 'reads on the replica backends, '
       . 'each given the history');
    my @ids;
    ok(Sluice::Test::wait_for(sub { @ids = sort(replica_ids($u)); @ids == 2 },
                              what => 'two replica backends'),
       'two replica backends, opened one per read while fewer than 2');
    my $off = length $t->error_log;
    ok($t->reload && Sluice::Test::wait_for(sub {
           substr($t->error_log, $off) =~ /handed over by process index/ },
           what => 'the handover'), 'reload: the session is handed over');
    is(join(' ', $two->selectrow_array('SELECT @two, @@server_id')),
       "22 $rid", 'and reads on');
    is("@{[ sort(replica_ids($u)) ]}", "@ids",
       'with both replica backends: the same two connections');
    $two->disconnect;
}

# --- a read the replica fails is retried on the primary -----------------
# The read runs in a child; the parent kills its replica connection while
# it sleeps there.
sub killed_read {
    my ($port, $prepared) = @_;
    my $file = $t->testdir . "/read.$port";
    unlink $file;
    my $child = fork // die "fork: $!";
    if ($child == 0) {
        my $c = $t->dbh(user => $v, password => 'r-pw', port => $port,
                        mariadb_server_prepare => $prepared ? 1 : 0);
        my @row;
        if ($c && $prepared) {
            # a server-side prepared read, once it runs on the replica
            my $sth = $c->prepare('SELECT SLEEP(?), @@server_id');
            for (1 .. 10) {
                $sth->execute(0) or last;
                my (undef, $sid) = $sth->fetchrow_array;
                $sth->finish;
                last if defined $sid && $sid == $rid;
            }
            @row = $sth->execute(2) ? $sth->fetchrow_array : ();
        } elsif ($c) {
            @row = $c->selectrow_array('SELECT SLEEP(2), @@server_id');
        }
        open my $fh, '>', $file or POSIX::_exit(1);
        print $fh @row ? "ok $row[1]\n"
                       : 'error ' . ($c ? $c->err : $DBI::err) . "\n";
        close $fh;
        POSIX::_exit(0);
    }
    my ($id) = (Sluice::Test::wait_for(sub {
        $r->selectrow_array('SELECT id FROM information_schema.processlist '
            . "WHERE user = ? AND info LIKE 'SELECT SLEEP%'", undef, $v)
    }, what => 'the read to run on the replica'));
    $r->do("KILL CONNECTION $id") if $id;
    waitpid $child, 0;
    return $t->read_file("read.$port") // '';
}
require POSIX;
is(killed_read($t->port(0)), "ok $pid\n",
   'a read whose replica connection is killed mid-way is answered by the '
   . 'primary, with no error');
like($t->error_log, qr/the command runs on '[^']+' instead/,
     'the log says where it ran');
is(killed_read($t->port(0), 1), "ok $pid\n",
   'a server-side prepared read (COM_STMT_EXECUTE) whose replica '
   . 'connection is killed mid-way is answered by the primary, with no '
   . 'error (the client\'s statement id is the primary\'s)');
like(killed_read($t->port(2)), qr/^error (1927|2013)/,
     'retry_failed_reads off: the client gets the error');
{
    my $c = $t->dbh(user => $v, password => 'r-pw', port => $t->port(3));
    my @row = $c ? $c->selectrow_array('SELECT SLEEP(0), @@server_id') : ();
    is_deeply(\@row, [0, $pid], 'a read a replica answers with ERR 1053 '
        . '(shutdown) is answered by the primary instead')
        or diag($c ? $c->errstr : $DBI::errstr);
}

# --- KILL QUERY reaches the statement on the replica ----------------------
{
    my $file = $t->testdir . '/sleep.out';
    pipe(my $rd, my $wr) or die "pipe: $!";
    my $child = fork // die "fork: $!";
    if ($child == 0) {
        close $rd;
        my $c = $t->dbh(user => $v, password => 'r-pw');
        syswrite $wr, ($c ? $c->{mariadb_thread_id} : 0) . "\n";
        my @row = $c ? $c->selectrow_array('SELECT SLEEP(30), @@server_id')
                     : ();
        open my $fh, '>', $file or POSIX::_exit(1);
        print $fh @row ? "@row\n" : 'error ' . ($c ? $c->err : '') . "\n";
        close $fh;
        POSIX::_exit(0);
    }
    close $wr;
    my $id = <$rd>;
    chomp $id;
    Sluice::Test::wait_for(sub {
        $r->selectrow_array('SELECT id FROM information_schema.processlist '
            . "WHERE user = ? AND info LIKE 'SELECT SLEEP(30)%'", undef, $v)
    }, what => 'the SLEEP to run on the replica');
    my $k = $t->dbh(user => $v, password => 'r-pw');
    ok($k->do("KILL QUERY $id"), "KILL QUERY $id (the id the client saw) "
       . 'from another session') or diag($k->errstr);
    my $done = Sluice::Test::wait_for(sub { waitpid($child, POSIX::WNOHANG())
                                            == $child }, timeout => 10,
                                      what => 'the killed SLEEP to end');
    kill 'KILL', $child unless $done;
    like($t->read_file('sleep.out') // '', qr/^(error 1317|1 $rid)$/,
         'the SLEEP running on the replica was interrupted at once (ERR '
         . '1317, Query execution was interrupted)');
}

# --- replica connections killed under a read load ------------------------
SKIP: {
    my $sb = eval { Sluice::Test::find_bin('sysbench') };
    skip 'no sysbench', 2
        unless $t->have($sb, 'no sysbench (contrib/deps.sh installs it)');
    my $p = $t->primary_dbh;
    $p->do('CREATE DATABASE IF NOT EXISTS rws_kill');
    $p->do("GRANT SELECT ON rws_kill.* TO '$v'\@'%'");
    my @c = ('--db-driver=mysql', '--mysql-db=rws_kill', '--tables=2',
             '--table-size=2000', '--mysql-ignore-errors=none');
    my $sock = $t->primary_socket;
    my $prep = `$sb oltp_read_only @c --mysql-user=root --mysql-password= --mysql-socket=$sock prepare 2>&1`;
    die "sysbench prepare: $prep" if $?;
    # the table may not have reached the replica yet: an error is a no
    Sluice::Test::wait_for(sub { (eval { $r->selectrow_array(
        'SELECT COUNT(*) FROM rws_kill.sbtest2') } // 0) == 2000 },
        what => 'the tables on the replica');
    my $out = $t->testdir . '/sysbench.out';
    my $child = fork // die "fork: $!";
    if ($child == 0) {
        exec("$sb oltp_read_only @c --skip_trx=on --db-ps-mode=disable "
             . "--mysql-user=$v --mysql-password=r-pw --mysql-host=127.0.0.1 "
             . '--mysql-port=' . $t->port(0) . " --threads=4 --time=6 run "
             . ">$out 2>&1") or POSIX::_exit(127);
    }
    my $kills = 0;
    while (waitpid($child, POSIX::WNOHANG()) == 0) {
        for my $id (replica_ids($v)) {
            $kills++ if $r->do("KILL CONNECTION $id");
        }
        select(undef, undef, undef, 0.2);       # a kill every 200 ms
    }
    my $rc = $?;
    my $res = $t->read_file('sysbench.out') // '';
    ok($kills >= 10, "replica backends killed $kills times during the run");
    ok($rc == 0 && $res =~ /ignored errors:\s+0\s/
       && $res =~ /reconnects:\s+0\s/,
       'sysbench oltp_read_only (autocommit) saw no error at all') or diag($res);
    $p->do('DROP DATABASE rws_kill');
}

# --- bad values ---------------------------------------------------------------
for my $case (['session_history_max 20000;', qr/more than 10000/],
              ['max_replica_connections 3;', qr/more than 2/]) {
    $t->write_file_expand('bad.conf', <<"EOF");
mysql {
    user app { password "secret"; }
    upstream c { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_5%%;
        router readwritesplit;
        upstream c;
        $case->[0]
    }
}
EOF
    my ($rc, $out) = $t->test_config(conf => 'bad.conf');
    ok($rc != 0 && $out =~ /bad\.conf:\d+: .*$case->[1]/,
       "$case->[0] is refused with file:line") or diag($out);
}
