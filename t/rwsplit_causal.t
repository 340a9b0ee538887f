#!/usr/bin/perl

# readwritesplit, causal reads (issue 9, "Read your own writes"): after a
# write, a read goes to the replica only once the replica has applied
# it.  The replica is made stale two ways: STOP SLAVE SQL_THREAD (the
# monitor then takes the replica out, so that is used without a
# monitor), and a LOCK TABLES ... READ held on the replica, which holds
# the SQL thread back while it still runs (the monitor keeps the replica
# in, behind).  Which server answered is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::FakeBackend;
use Sluice::Wire qw(read_packet send_packet raw_login build_greeting);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

# whatever happens, the replica replicates at the end
my $restore = 0;
END {
    if ($restore) {
        eval { $t->replica_dbh->do('START SLAVE SQL_THREAD') };
    }
}

my $mon_pass = 'M0n-Causal-7';
my $p = $t->primary_dbh;
$p->do("CREATE OR REPLACE USER 'sluice_mon'\@'%' IDENTIFIED BY ?", undef,
       $mon_pass);
$p->do("GRANT SLAVE MONITOR ON *.* TO 'sluice_mon'\@'%'");
$p->do('CREATE OR REPLACE TABLE causal (id INT PRIMARY KEY, v INT)');
my $r = $t->replica_dbh;
$restore = 1;
wait_for(sub {
    $r->selectrow_array("SELECT COUNT(*) FROM information_schema.tables "
        . "WHERE table_schema = 'test' AND table_name = 'causal'")
    && $r->selectrow_array("SELECT COUNT(*) FROM mysql.user "
                           . "WHERE user = 'sluice_mon'");
}, what => 'the table and the monitor account on the replica');

my $servers = '';
my @modes = (
    # port => [monitor?, causal_reads, causal_reads_timeout]
    [1, 'local', undef],        # 0
    [0, 'off', undef],          # 1
    [1, 'global', undef],       # 2
    [0, 'local', '10s'],        # 3: waits on the replica
    [0, 'local', '300ms'],      # 4: the wait times out
    [0, undef, undef],          # 5: the default (local), no monitor
    [1, 'local', '10s'],        # 6: monitor and timeout
);
for my $i (0 .. $#modes) {
    my ($mon, $mode, $to) = @{ $modes[$i] };
    $servers .= "    server {\n"
        . "        listen 127.0.0.1:%%PORT_$i%%;\n"
        . "        router readwritesplit;\n"
        . '        upstream ' . ($mon ? 'watched' : 'plain') . ";\n"
        . (defined $mode ? "        causal_reads $mode;\n" : '')
        . (defined $to ? "        causal_reads_timeout $to;\n" : '')
        . "    }\n";
}
# a MySQL 8 primary (a scripted one: no MySQL server on Debian 12), a
# real replica
$servers .= "    server {\n"
    . "        listen 127.0.0.1:%%PORT_10%%;\n"
    . "        router readwritesplit;\n"
    . "        upstream mysql8;\n"
    . "    }\n";
my $fake = Sluice::FakeBackend->new(port => $t->port(11),
    greeting => build_greeting(version => '8.0.36'),
    script => [ 'login', 'answer_ok' ]);
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
    upstream plain {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    upstream mysql8 {
        server 127.0.0.1:%%PORT_11%% role=primary;
        server %%REPLICA%% role=replica;
    }
$servers}
EOF
$t->run;
$t->plan(60);

my $pid = $p->selectrow_array('SELECT @@server_id');
my $rid = $r->selectrow_array('SELECT @@server_id');

# where a read ran, and whether it saw row $id: "replica 0", "primary 1"
sub read_of {
    my ($dbh, $id) = @_;
    my ($sid, $n) = $dbh->selectrow_array(
        'SELECT @@server_id, COUNT(*) FROM causal WHERE id = ?', undef, $id);
    return 'error: ' . ($dbh->errstr // '?') unless defined $sid;
    return ($sid == $pid ? 'primary' : $sid == $rid ? 'replica' : "? $sid")
        . " $n";
}

sub replica_has {
    my ($id) = @_;
    return wait_for(sub {
        $r->selectrow_array('SELECT COUNT(*) FROM causal WHERE id = ?',
                            undef, $id);
    }, what => "row $id on the replica");
}

# The replica's SQL thread, held back by a table lock while it runs on.
my $locker;
sub hold_replica {
    $locker = $t->replica_dbh;
    $locker->do('LOCK TABLES causal READ');
}
sub release_replica {
    $locker->do('UNLOCK TABLES');
    undef $locker;
}

# --- local, with a monitor ----------------------------------------------

my $d = $t->dbh;
ok($d, 'logged in (causal_reads local, monitor)') or diag($DBI::errstr);
is(read_of($d, 1), 'replica 0', 'a session that never wrote reads from '
   . 'the replica');
hold_replica();
ok($d->do('INSERT INTO causal VALUES (1, 1)'), 'a write, replica held back');
is(read_of($d, 1), 'primary 1', 'INSERT then SELECT in autocommit sees '
   . 'the row: the primary, the replica has not applied it');
my $n = $t->dbh;
is(read_of($n, 1), 'replica 0', 'another session reads from the replica, '
   . 'which is stale (the test can fail)');
release_replica();
replica_has(1);
ok(wait_for(sub { read_of($d, 1) eq 'replica 1' }, timeout => 10,
            what => 'the read back on the replica'),
   'once the replica has applied it (the monitor saw it), reads go back '
   . 'to the replica');
ok($d->do('INSERT INTO causal VALUES (11, 1)'), 'another write');
replica_has(11);
ok(wait_for(sub { read_of($d, 11) eq 'replica 1' }, timeout => 10,
            what => 'the read on the replica'),
   'no stickiness: after the next write, back to the replica too');

# the client sets the tracked variables itself: last_gtid is gone from
# them, and the session falls back to the primary after a write
my $c = $t->dbh;
ok($c->do("SET \@\@session.session_track_system_variables = 'autocommit'"),
   'a client sets session_track_system_variables');
is(read_of($c, 12), 'replica 0', 'and reads from the replica');
hold_replica();
ok($c->do('INSERT INTO causal VALUES (12, 1)'), 'a write, replica held back');
is(read_of($c, 12), 'primary 1', 'GTIDs no longer tracked: the read after '
   . 'a write goes to the primary');
release_replica();
replica_has(12);

# --- off ---------------------------------------------------------------

my $o = $t->dbh(port => $t->port(1));
is(read_of($o, 3), 'replica 0', 'causal_reads off: the replica');
$r->do('STOP SLAVE SQL_THREAD');
ok($o->do('INSERT INTO causal VALUES (3, 1)'), 'a write, SQL thread stopped');
is(read_of($o, 3), 'replica 0', 'causal_reads off: the read goes to the '
   . 'replica and does not see the row');

# --- local, no monitor, no timeout: the primary ----------------------------

my $l = $t->dbh(port => $t->port(5));
is(read_of($l, 4), 'replica 0', 'default (local) without a monitor: reads '
   . 'from the replica before any write');
ok($l->do('INSERT INTO causal VALUES (4, 1)'), 'a write');
is(read_of($l, 4), 'primary 1', 'without a monitor the read after it goes '
   . 'to the primary');
$r->do('START SLAVE SQL_THREAD');
replica_has(4);

# --- global ------------------------------------------------------------

my $ga = $t->dbh(port => $t->port(2));
my $gb = $t->dbh(port => $t->port(2));
# (the monitor sees the replica's SQL thread running again within its
# interval: until then no replica is picked)
ok(wait_for(sub { read_of($gb, 2) eq 'replica 0' },
            what => 'the monitor to see the replica running'),
   'global: a session reads from the replica');
hold_replica();
ok($ga->do('INSERT INTO causal VALUES (2, 1)'), 'global: another session '
   . 'writes, replica held back');
is(read_of($gb, 2), 'primary 1', 'global: the first session\'s read avoids '
   . 'the stale replica');
release_replica();
replica_has(2);
ok(wait_for(sub { read_of($gb, 2) eq 'replica 1' }, timeout => 10,
            what => 'global read back on the replica'),
   'global: back to the replica once it has applied the write');

# --- causal_reads_timeout: MASTER_GTID_WAIT on the replica ------------------

my $w = $t->dbh(port => $t->port(3));
is(read_of($w, 5), 'replica 0', 'timeout 10s: the replica backend opens');
$r->do('STOP SLAVE SQL_THREAD');
ok($w->do('INSERT INTO causal VALUES (5, 1)'), 'a write, SQL thread stopped');
# the replica's SQL thread starts again a moment after the read began
my $sock = $t->replica_socket;
my $cli = Sluice::Test::find_bin('mariadb', 'mysql');
system("(sleep 1; $cli --no-defaults -S $sock -uroot "
       . "-e 'START SLAVE SQL_THREAD') >/dev/null 2>&1 &");
my $t0 = time;
is(read_of($w, 5), 'replica 1', 'the read waited on the replica '
   . '(MASTER_GTID_WAIT), then ran there and sees the row');
cmp_ok(time - $t0, '<', 9, 'well within the timeout');

my $x = $t->dbh(port => $t->port(4));
is(read_of($x, 6), 'replica 0', 'timeout 300ms: the replica backend opens');
$r->do('STOP SLAVE SQL_THREAD');
ok($x->do('INSERT INTO causal VALUES (6, 1)'), 'a write, SQL thread stopped');
is(read_of($x, 6), 'primary 1', 'the wait timed out: the read ran on the '
   . 'primary, once');
is(read_of($x, 1), 'primary 1', 'and the session goes on');
ok(wait_for(sub { $t->grep_log(qr/replica \S+ has not applied the /) },
            timeout => 5), 'the timed-out wait is logged');

# --- no round trip once the replica is known to have it ------------------

$r->do('START SLAVE SQL_THREAD');
my $h = $t->dbh(port => $t->port(6));
ok(wait_for(sub { read_of($h, 8) eq 'replica 0' }, timeout => 10),
   'monitor and timeout: the replica, once the monitor sees it replicate');
ok($h->do('INSERT INTO causal VALUES (8, 1)'), 'a write');
replica_has(8);
ok(wait_for(sub { read_of($h, 8) eq 'replica 1' }, timeout => 10),
   'read on the replica, which has the row');
my $sets = sub { ($r->selectrow_array(
    "SHOW GLOBAL STATUS LIKE 'Com_set_option'"))[1] };
my $before = $sets->();
my @got = map { read_of($h, 8) } 1 .. 5;
is("@got", join(' ', ('replica 1') x 5), 'the reads after it: the replica');
is($sets->() - $before, 0, 'and no MASTER_GTID_WAIT was sent for them '
   . '(no round trip once the replica is known to have the write)');

# --- a client without CLIENT_SESSION_TRACK -----------------------------------

# raw protocol: PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, no session
# tracking; the first value of a text result's first row
sub raw_query {
    my ($s, $sql) = @_;
    send_packet($s, 0, "\x03$sql");
    my (undef, $pl) = read_packet($s);
    return undef unless defined $pl;
    my $b = ord $pl;
    return $b == 0 ? 'OK' : 'ERR ' . substr($pl, 9) if $b == 0 || $b == 0xff;
    my @rows;
    for (my $eofs = 0; $eofs < 2; ) {
        (undef, $pl) = read_packet($s);
        return undef unless defined $pl;
        if (ord $pl == 0xfe && length $pl < 9) { $eofs++; next }
        push @rows, $pl if $eofs == 1;
    }
    my @v;
    my $row = $rows[0];
    while (length $row) {
        my $len = ord $row;
        push @v, substr($row, 1, $len);
        $row = substr($row, 1 + $len);
    }
    return join ' ', @v;
}

$r->do('START SLAVE SQL_THREAD');
replica_has(6);
my $s = raw_login($t->port(0));
my (undef, $login) = read_packet($s);
is(ord($login // "\xff"), 0, 'raw client without CLIENT_SESSION_TRACK '
   . 'logged in (local, monitor)');
my $raw_read = sub {
    my ($sock, $id) = @_;
    return raw_query($sock, 'SELECT @@server_id, COUNT(*) FROM test.causal '
                     . "WHERE id = $id");
};
is($raw_read->($s, 7), "$rid 0", 'it reads from the replica before any '
   . 'write');
my $pselects = sub { ($p->selectrow_array(
    "SHOW GLOBAL STATUS LIKE 'Com_select'"))[1] };
hold_replica();
is(raw_query($s, 'INSERT INTO test.causal VALUES (7, 1)'), 'OK',
   'raw client: a write, replica held back');
my $sel0 = $pselects->();
is($raw_read->($s, 7), "$pid 1", 'no session tracking: the read after a '
   . 'write goes to the primary and sees the row');
is($pselects->() - $sel0, 2, 'with the session\'s last GTID asked ahead '
   . 'of it (SELECT @@last_gtid: two SELECTs on the primary)');
$sel0 = $pselects->();
is($raw_read->($s, 7), "$pid 1", 'the next read too: the replica has not '
   . 'applied that GTID');
is($pselects->() - $sel0, 1, 'without asking again (no write since)');
release_replica();
replica_has(7);
ok(wait_for(sub { $raw_read->($s, 7) eq "$rid 1" }, timeout => 10,
            what => 'the raw client back on the replica'),
   'once the replica has applied the GTID (the monitor saw it), reads go '
   . 'back to the replica (the fallback knows the GTID, it does not stay '
   . 'on the primary)');

# without a monitor, with causal_reads_timeout: the GTID asked of the
# primary is what the replica waits for (MASTER_GTID_WAIT)
my $sw = raw_login($t->port(3));
(undef, $login) = read_packet($sw);
is(ord($login // "\xff"), 0, 'raw client logged in (timeout 10s, no '
   . 'monitor)');
is($raw_read->($sw, 13), "$rid 0", 'it reads from the replica');
$r->do('STOP SLAVE SQL_THREAD');
is(raw_query($sw, 'INSERT INTO test.causal VALUES (13, 1)'), 'OK',
   'a write, SQL thread stopped');
is($raw_read->($sw, 13), "$pid 1", 'the first read after it: the primary, '
   . 'which also answers the session\'s last GTID');
system("(sleep 1; $cli --no-defaults -S $sock -uroot "
       . "-e 'START SLAVE SQL_THREAD') >/dev/null 2>&1 &");
is($raw_read->($sw, 13), "$rid 1", 'the next: the replica waits for that '
   . 'GTID, then answers with the row');

# --- a session that wrote, handed over by a reload ----------------------

my $hv = $t->dbh;
ok(wait_for(sub { read_of($hv, 14) eq 'replica 0' }, timeout => 10,
            what => 'the replica replicating again'),
   'a session reads from the replica (once the monitor sees it replicate)');
hold_replica();
ok($hv->do('INSERT INTO causal VALUES (14, 1)'), 'it writes, replica held '
   . 'back');
my $off = length $t->error_log;
ok($t->reload && wait_for(sub {
       substr($t->error_log, $off) =~ /handed over by process index/ },
       what => 'the handover'), 'reload: the session is handed over');
is(read_of($hv, 14), 'primary 1', 'after the handover its read sees its '
   . 'write (the primary: the GTID stayed in the old worker)');
release_replica();
replica_has(14);
ok(wait_for(sub { read_of($hv, 14) eq 'replica 1' }, timeout => 10,
            what => 'the handed-over session back on the replica'),
   'its GTID asked of its primary connection (@@last_gtid), it reads from '
   . 'the replica again once that has it (before: the primary for good)');

# --- a MySQL primary: no last_gtid to ask for --------------------------

my $m8 = $t->dbh(port => $t->port(10));
ok($m8, 'logged in through a MySQL 8 primary (scripted)')
    or diag($DBI::errstr);
my $hex = sub { unpack 'H*', $_[0] };
is(read_of($m8, 15), 'replica 0', 'reads go to the replica');
ok($m8->do('INSERT INTO causal VALUES (15, 1)'), 'a write (the primary '
   . 'answers OK, with no GTID)');
my $saw = $fake->saw(qr/\Q${\ $hex->('SELECT @@server_id')}\E/);
read_of($m8, 15);
is($fake->saw(qr/\Q${\ $hex->('SELECT @@server_id')}\E/) - $saw, 1,
   'the read after it went to the MySQL primary: its GTIDs cannot be '
   . 'known, so no replica can be shown to have them');
is($fake->saw(qr/\Q${\ $hex->('session_track_system_variables')}\E|\Q${\
                 $hex->('last_gtid')}\E/), 0,
   'and neither last_gtid tracking nor @@last_gtid was asked of it');

# a value it does not know
$t->write_file_expand('bad.conf', <<'EOF');
mysql {
    upstream c { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_9%%;
        router readwritesplit;
        upstream c;
        causal_reads sometimes;
    }
}
EOF
my ($rc, $out) = $t->test_config(conf => 'bad.conf');
ok($rc != 0 && $out =~ /bad\.conf:\d+: .*sometimes/,
   'causal_reads refuses an unknown value, with file:line') or diag($out);
