#!/usr/bin/perl

# A reload never breaks a client connection: an old worker hands every
# session at rest (between commands, outside a transaction) to the new
# worker of its slot, with its client and backend sockets, and the
# session goes on there.
#
#   - 20 reloads under sysbench oltp_read_write (8 threads), through
#     readconn and then through readwritesplit, with
#     worker_shutdown_timeout 1s: no error, no reconnect, and the old
#     workers are gone within GONE s of each reload;
#   - a session keeps its state (user variable, temporary table, server
#     prepared statement, default database, character set, connection),
#     with auth local and auth passthrough;
#   - a transaction open across a reload is handed over after it ends;
#   - a client pipelining queries while reloads happen gets every answer,
#     in order;
#   - KILL <proxy id> names a handed-over session;
#   - a reload that removes the session's backend server closes it at a
#     safe point, with the reason logged.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::Sandbox qw(find_bin pid_alive wait_exit slurp);
use Sluice::Wire qw(read_packet raw_login);

use constant {
    RELOADS      => 20,
    THREADS      => 8,
    # s: old workers exit within this of a reload.  worker_shutdown_timeout
    # (1s) bounds their wait for sessions to come to rest (a session it
    # cut would fail sysbench); the rest is the exit and the master's reap,
    # which on two busy cores took over a second (CI: "after reload 8")
    GONE         => 3,
    PIPE_RELOADS => 5,
};

my $t = Sluice::Test->new;
$t->has('readconn');
my $sysbench = eval { find_bin('sysbench') };
$t->need($sysbench, 'no sysbench (contrib/deps.sh installs it)');

my $dir = $t->testdir;

# reps: the replica, or (removed => 1) the primary in its place, which
# is another backend server for a session on the replica.
sub write_conf {
    my (%o) = @_;
    my $reps = $o{removed} ? '%%PRIMARY%%' : '%%REPLICA%%';
    $t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
worker_shutdown_timeout 1s;
events { worker_connections 200; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
    }
    upstream reps {
        server $reps role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        auth passthrough;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        readconn_role replica;
        upstream reps;
    }
    upstream split {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readwritesplit;
        upstream split;
    }
}
EOF
}

write_conf();
$t->run;
$t->plan(43);

my $generation = 1;

# HUP, wait for "reconfigured: generation N", then (unless told not to)
# for every worker of before to exit within GONE s.  Returns the pids of
# before, or undef on a failure (diagnosed).
sub reload {
    my (%o) = @_;
    my %old = map { $_ => 1 } $t->worker_pids;
    my $gen = ++$generation;
    $t->signal('HUP');
    wait_for(sub { $t->grep_log(qr/reconfigured: generation $gen,/) },
             what => "generation $gen") or return undef;
    return [ keys %old ] if $o{keep};
    wait_for(sub { !grep { $old{$_} } $t->worker_pids },
             timeout => $o{timeout} // GONE,
             what => "the old workers to exit after reload $gen")
        or return undef;
    return [ keys %old ];
}

sub deadlocks {
    my ($p) = @_;
    return ($p->selectrow_array("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'"))[1];
}

# --- sysbench through 20 reloads -----------------------------------------

my @common = ('--db-driver=mysql', '--mysql-db=test', '--tables=8',
              '--table-size=20000');
{
    my $p = $t->primary_dbh;
    $p->do("DROP TABLE IF EXISTS sbtest$_") for 1 .. 8;
    my $prep = `$sysbench oltp_read_write @common --mysql-user=root --mysql-password= --mysql-socket=@{[ $t->primary_socket ]} prepare 2>&1`;
    is($?, 0, 'sysbench prepare on the primary') or diag($prep);
}

# sysbench oltp_read_write through the server on port $port (router
# $what) while 20 reloads happen: 7 tests.
sub sysbench_reloads {
    my ($port, $what) = @_;
    my $p = $t->primary_dbh;
    my $out = "$dir/sysbench.$port.out";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        open(STDOUT, '>', $out) or POSIX::_exit(1);
        open(STDERR, '>&', \*STDOUT) or POSIX::_exit(1);
        { exec($sysbench, 'oltp_read_write', @common, '--mysql-user=app',
             '--mysql-password=secret', '--mysql-host=127.0.0.1',
             '--mysql-port=' . $t->port($port), '--threads=' . THREADS,
             '--time=25', '--events=0', '--report-interval=1',
             # no --mysql-ignore-errors: any error (2013 Lost connection,
             # but also a deadlock) aborts the run.  Eight tables of
             # 20000 rows keep 8 threads from deadlocking each other
             # (4 x 2000 had a few deadlocks a second, with or without
             # sluice)
             'run') }
        POSIX::_exit(127);
    }
    # it runs: the first report line
    ok(wait_for(sub { (slurp($out) // '') =~ /\] thds: \d+ tps: [1-9]/ },
                what => 'sysbench to run'), "$what: sysbench runs");
    my $status;
    my $reaped = sub {
        $status //= $? if waitpid($pid, POSIX::WNOHANG()) == $pid;
        return defined $status;
    };
    my $deadlocks = deadlocks($p);
    my $handed = () = $t->grep_log(qr/handed over to the new worker/);
    my ($done, $start) = (0, time);
    for (1 .. RELOADS) {
        # spread over the run: one more report line (1 s) between reloads
        my $lines = () = (slurp($out) // '') =~ /\] thds:/g;
        wait_for(sub { (() = (slurp($out) // '') =~ /\] thds:/g) > $lines });
        last unless reload() && !$reaped->();
        $done++;
    }
    is($done, RELOADS, "$what: " . RELOADS . ' reloads during the run, '
       . 'each old worker gone within ' . GONE . ' s');
    note(sprintf('%d reloads in %.1f s', $done, time - $start));
    my $rc = wait_for($reaped, timeout => 60, what => 'sysbench')
             ? $status : -1;
    my $text = slurp($out) // '';
    is($rc, 0, "$what: sysbench exits 0") or diag(join "\n",
        grep { /FATAL|ALERT|error/i } split /\n/, $text);
    # oltp_read_write can deadlock in InnoDB by itself (two transactions
    # deleting and inserting the same id): sysbench retries those and
    # counts them as ignored errors.  Every error it ignored must be one
    # of the server's own deadlocks, never something the proxy did.
    my ($ignored) = $text =~ /^\s*ignored errors:\s+(\d+)\s/m;
    my $dl = deadlocks($p) - $deadlocks;
    ok(defined $ignored, "$what: sysbench reports its ignored errors");
    is($ignored // -1, $dl, "$what: each error sysbench ignored is a "
       . "deadlock the server itself reported ($dl)");
    like($text, qr/^\s*reconnects:\s+0\s/m,
         "$what: sysbench: 0 reconnects");
    my $now = () = $t->grep_log(qr/handed over to the new worker/);
    ok($now > $handed, "$what: the log says sessions were handed over");
}

sysbench_reloads(0, 'readconn');
sysbench_reloads(3, 'readwritesplit');

# --- a session keeps its state -------------------------------------------

# Each port: 0 auth local, 1 auth passthrough.
for my $port (0, 1) {
    my $what = $port ? 'passthrough' : 'local';
    my $d = $t->dbh(port => $t->port($port), mariadb_server_prepare => 1);
    ok($d, "$what: connected") or next;
    my $conn = $d->selectrow_array('SELECT CONNECTION_ID()');
    $d->do('SET @handover = 42');
    $d->do('CREATE TEMPORARY TABLE ho_tmp (v INT)');
    $d->do('INSERT INTO ho_tmp VALUES (7)');
    $d->do('USE mysql');
    $d->do('SET NAMES latin1');
    my $sth = $d->prepare('SELECT ? + 1');
    reload();
    my $got = join ',', map { $_ // 'undef' } $d->selectrow_array(
        'SELECT CONNECTION_ID(), @handover, (SELECT v FROM test.ho_tmp), '
        . 'DATABASE(), @@character_set_client');
    is($got, "$conn,42,7,mysql,latin1",
       "$what: connection, variable, temporary table, database and "
       . 'character set kept');
    my $v = $sth->execute(41) && ($sth->fetchrow_array)[0];
    is($v, 42, "$what: the prepared statement still runs");
    $d->disconnect;
}

# --- a transaction across a reload ---------------------------------------

{
    my $p = $t->primary_dbh;
    $p->do('CREATE OR REPLACE TABLE ho_trx (v INT)');
    my $d = $t->dbh;
    my $id = $d->{mariadb_thread_id};
    $d->do('BEGIN');
    $d->do('INSERT INTO ho_trx VALUES (1)');
    my $old = reload(keep => 1);
    ok($old && grep({ pid_alive($_) } @$old),
       'trx: the old worker stays while the transaction is open');
    is(scalar $t->grep_log(qr/\*$id handed over to/), 0,
       'trx: not handed over inside the transaction');
    is($d->selectrow_array('SELECT COUNT(*) FROM ho_trx'), 1,
       'trx: the uncommitted row is visible inside it');
    is($p->selectrow_array('SELECT COUNT(*) FROM ho_trx'), 0,
       'trx: and not from another session');
    ok($d->do('COMMIT'), 'trx: COMMIT');
    ok(wait_for(sub { $t->grep_log(qr/\*$id handed over to the new/) },
                timeout => GONE, what => 'the handover after COMMIT'),
       'trx: handed over once the transaction ended');
    ok(wait_for(sub { !grep { pid_alive($_) } @$old }, timeout => GONE,
                what => 'the old worker'), 'trx: the old worker exits');
    is($d->selectrow_array('SELECT COUNT(*) FROM ho_trx'), 1,
       'trx: the session goes on in the new worker');
    is($p->selectrow_array('SELECT COUNT(*) FROM ho_trx'), 1,
       'trx: committed');
    $d->disconnect;
}

# --- pipelined queries while reloads happen ------------------------------

sub packet { substr(pack('V', length $_[1]), 0, 3) . chr($_[0]) . $_[1] }

# One text result set (no DEPRECATE_EOF) of one column and one row.
sub read_value {
    my ($s) = @_;
    my (undef, $count) = read_packet($s);
    return undef unless defined $count && $count eq "\x01";
    my ($v, $eofs) = (undef, 0);
    while ($eofs < 2) {
        my (undef, $pl) = read_packet($s);
        return undef if !defined $pl || ord($pl) == 0xff;
        if (ord($pl) == 0xfe && length $pl < 9) { $eofs++; next }
        $v = substr($pl, 1) if $eofs == 1;
    }
    return $v;
}

{
    my $out = "$dir/pipe.out";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $s = raw_login($t->port(0));
        my (undef, $ok) = $s ? read_packet($s) : ();
        my ($n, $bad) = (0, 'login');
        if (defined $ok && ord($ok) == 0) {
            $bad = '';
            until (-e "$dir/pipe.stop" || $bad) {
                # three queries in one write, then their three answers
                syswrite($s, join '', map { packet(0, "\x03SELECT "
                                                   . ($n + $_)) } 1 .. 3);
                for (1 .. 3) {
                    my $v = read_value($s);
                    $n++;
                    $bad = "answer $n: " . ($v // 'none') if ($v // '') ne $n;
                    last if $bad;
                }
            }
        }
        open(my $fh, '>', "$out.tmp") or POSIX::_exit(1);
        print $fh "answers $n\nbad $bad\n";
        close $fh;
        rename "$out.tmp", $out;
        POSIX::_exit(0);
    }
    my $ok = 0;
    for (1 .. PIPE_RELOADS) {
        $ok++ if reload();
    }
    open(my $fh, '>', "$dir/pipe.stop") or die $!;
    close $fh;
    wait_exit($pid, 20);
    my $res = slurp($out) // '';
    is($ok, PIPE_RELOADS, 'pipeline: ' . PIPE_RELOADS . ' reloads, old '
       . 'workers gone');
    like($res, qr/^bad \n/m, 'pipeline: every answer arrived, in order')
        or diag($res);
    my ($n) = $res =~ /^answers (\d+)/m;
    ok(($n // 0) > 0, 'pipeline: answers counted') or diag($res);
}

# --- KILL <proxy id> of a handed-over session ----------------------------

{
    my $victim = $t->dbh;
    my $killer = $t->dbh;
    my $id = $victim->{mariadb_thread_id};
    ok($id >= 0x80000000, 'kill: the victim has a proxy id');
    reload();
    ok($t->grep_log(qr/\*$id handed over by process/),
       'kill: the victim was handed over');
    ok($killer->do("KILL $id"), 'kill: KILL <proxy id> accepted');
    ok(!$victim->do('SELECT 1'), 'kill: the victim is gone');
    ok($killer->do('SELECT 1'), 'kill: the killer goes on');
}

# --- a reload removes the session's backend server -----------------------

{
    my $d = $t->dbh(port => $t->port(2));
    my $id = $d->{mariadb_thread_id};
    ok($d->do('SELECT 1'), 'removed: a session on the replica');
    write_conf(removed => 1);
    ok(reload(), 'removed: reload without the replica');
    ok(wait_for(sub { $t->grep_log(qr/\*$id closed at a safe point: backend server removed by reload/) },
                what => 'the close'), 'removed: closed, with the reason');
    ok(!$d->do('SELECT 1'), 'removed: the client sees the session gone');
    my $n = $t->dbh(port => $t->port(2));
    ok($n && $n->do('SELECT 1'), 'removed: a new session works');
}
