#!/usr/bin/perl

# readwritesplit and prepared statements of the binary protocol (issue 9,
# section 3): a prepared read runs on the replica, a prepared write on the
# primary, the same read inside a transaction on the primary; the client
# sees one statement id; parameter types the client bound once reach a
# server that has not seen them; CLOSE reaches every server that holds
# the statement; max_prepared_statements; a CALL with two result sets;
# cursors; a replica that refuses a PREPARE or dies; a reload with
# statements open; sysbench with prepared statements.  Which server ran a
# statement is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
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
        max_prepared_statements 3;
    }
}
EOF
$t->run;
$t->plan(66);

my $P = $t->primary_dbh;
my $R = $t->replica_dbh;
my $pid = $P->selectrow_array('SELECT @@server_id');
my $rid = $R->selectrow_array('SELECT @@server_id');
$P->do('CREATE OR REPLACE TABLE rwps (id INT PRIMARY KEY, sid INT)');
$P->do('CREATE OR REPLACE PROCEDURE rwps_two() '
       . "BEGIN SELECT '1' AS a; SELECT '2' AS b, '3' AS c; END");
# a table the replica does not have: a PREPARE of it fails there only
$P->do('SET sql_log_bin = 0');
$P->do('CREATE OR REPLACE TABLE rwps_primary_only (x INT)');
$P->do('INSERT INTO rwps_primary_only VALUES (1)');
$P->do('SET sql_log_bin = 1');
wait_for(sub { $R->selectrow_array(
    "SELECT COUNT(*) FROM information_schema.ROUTINES "
    . "WHERE ROUTINE_NAME = 'rwps_two'") },
    what => 'the procedure on the replica');

sub name_of {
    my ($id) = @_;
    return !defined $id ? 'undef' : $id == $pid ? 'primary'
         : $id == $rid ? 'replica' : "? $id";
}

sub closes_on {
    my ($dbh) = @_;
    return ($dbh->selectrow_array(
        "SHOW GLOBAL STATUS LIKE 'Com_stmt_close'"))[1];
}

sub prepares_on {
    my ($dbh) = @_;
    return ($dbh->selectrow_array(
        "SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'"))[1];
}

sub stmts_on {
    my ($dbh) = @_;
    return ($dbh->selectrow_array(
        "SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'"))[1];
}

# --- DBD::MariaDB with server-side prepares ---------------------------------

my $d = $t->dbh(mariadb_server_prepare => 1);
ok($d, 'logged in, server-side prepares') or diag($DBI::errstr);

my $sel = $d->prepare('SELECT @@server_id, ?');
my $run = sub {
    my ($sth, @bind) = @_;
    $sth->execute(@bind) or return 'error: ' . $sth->errstr;
    my @row = $sth->fetchrow_array;
    $sth->finish;
    return name_of($row[0]) . (@row > 1 ? ':' . ($row[1] // 'NULL') : '');
};
ok(wait_for(sub { $run->($sel, 5) eq 'replica:5' }, timeout => 5,
            what => 'the prepared SELECT on the replica'),
   'a prepared SELECT runs on the replica');
is($run->($sel, 6), 'replica:6', 'and again, with another value');

# a write from a connection of its own: after it, a session reads from the
# primary (read-your-writes)
my $w = $t->dbh(mariadb_server_prepare => 1);
my $ins = $w->prepare('INSERT INTO rwps SELECT ?, @@server_id');
ok($ins->execute(1), 'a prepared INSERT');
is(name_of($P->selectrow_array('SELECT sid FROM rwps WHERE id = 1')),
   'primary', 'ran on the primary');

my $e = $t->dbh(mariadb_server_prepare => 1);
my $sel2 = $e->prepare('SELECT @@server_id, ?');
wait_for(sub { $run->($sel2, 1) eq 'replica:1' }, timeout => 5);
$e->begin_work;
is($run->($sel2, 7), 'primary:7',
   'inside a transaction the same statement runs on the primary');
$e->commit;
is($run->($sel2, 8), 'replica:8', 'after COMMIT on the replica again');

# a read-only transaction runs on the replica, whatever was prepared
# there before: its statements wait for their PREPARE there
my $ro = $e->prepare('START TRANSACTION READ ONLY');
ok($ro && $ro->execute, 'a prepared START TRANSACTION READ ONLY');
is($run->($sel2, 9), 'replica:9', 'inside it: the replica');
my $in_ro = $e->prepare('SELECT @@server_id, ? - 1');
is($run->($in_ro, 9), 'replica:8',
   'a statement prepared inside it runs there at once');
my $commit = $e->prepare('COMMIT');
ok($commit && $commit->execute, 'a prepared COMMIT');

# CLOSE reaches the replica too, and the statement can be prepared again
# (the replica's counts are global, and a connection of an earlier test
# may free its statements meanwhile: its PREPAREs are counted instead)
my $before = prepares_on($R);
my $tmp = $e->prepare('SELECT @@server_id, ? + 1');
ok(wait_for(sub { $run->($tmp, 1) eq 'replica:2' }, timeout => 5),
   'another statement on the replica');
cmp_ok(prepares_on($R), '>', $before, 'the replica prepared it');
# the replica's counts are global: a connection of an earlier test that
# the server is still tearing down may free statements meanwhile, so the
# CLOSE is seen as a COM_STMT_CLOSE executed there and one statement fewer
my $held = stmts_on($R);
my $closes = closes_on($R);
$tmp->finish;
undef $tmp;                             # COM_STMT_CLOSE
ok(wait_for(sub { closes_on($R) > $closes && stmts_on($R) < $held },
            timeout => 10, what => 'the CLOSE on the replica'),
   'closed on the replica too')
    or diag('statements ', stmts_on($R), " (held $held), closes ",
            closes_on($R), " (before $closes)");
$tmp = $e->prepare('SELECT @@server_id, ? + 1');
ok(wait_for(sub { $run->($tmp, 2) eq 'replica:3' }, timeout => 5),
   'prepared again after CLOSE: runs on the replica');
is($run->($sel2, 10), 'replica:10', 'the other statement is unaffected');

# the text protocol's PREPARE / EXECUTE still work
ok($e->do(q{PREPARE tp FROM 'SELECT @@server_id, 4'}), 'text PREPARE');
is(name_of(($e->selectrow_array('EXECUTE tp'))[0]), 'primary',
   'text EXECUTE on the primary');
ok($e->do('DEALLOCATE PREPARE tp'), 'DEALLOCATE');

# the prepared COMMIT ended the replica's transaction: a write works
my $ins2 = $e->prepare('INSERT INTO rwps SELECT ?, @@server_id');
ok($ins2->execute(2), 'a write after the prepared COMMIT (no read-only '
   . 'transaction left open)') or diag($ins2->errstr);

# session state set through prepared statements (DBD::MariaDB prepares
# even the SET of a do()): the replica gets it too, or, with parameters,
# the session reads from the primary
{
    my $v = $t->dbh(mariadb_server_prepare => 1);
    my $q = $v->prepare('SELECT @@server_id, @ps_var');
    wait_for(sub { $run->($q) eq 'replica:NULL' }, timeout => 5);
    ok($v->do('SET @ps_var = 42'), 'a prepared SET');
    is($run->($q), 'replica:42', 'the replica has the variable');
    my $late = $t->dbh(mariadb_server_prepare => 1);
    ok($late->do('SET @ps_late = 5'), 'a prepared SET before any replica');
    my $lq = $late->prepare('SELECT @@server_id, @ps_late');
    ok(wait_for(sub { $run->($lq) eq 'replica:5' }, timeout => 5),
       'a replica opened later has it (the history)');
    ok($v->do('SET @ps_p = ?', undef, 7), 'a prepared SET with a parameter');
    my $pq = $v->prepare('SELECT @@server_id, @ps_p');
    is(join(' ', map { $run->($pq) } 1 .. 3), 'primary:7 primary:7 primary:7',
       'then the session reads from the primary, which has it');
}

# a PREPARE the replica refuses: the statement stays on the primary
{
    my $po = $d->prepare('SELECT @@server_id, x FROM rwps_primary_only');
    my @r = map { $run->($po) } 1 .. 3;
    is("@r", 'primary:1 primary:1 primary:1',
       'a statement the replica cannot prepare runs on the primary');
    is($run->($sel, 12), 'replica:12', 'the replica still serves the rest');
}

# max_prepared_statements
{
    my $m = $t->dbh(port => $t->port(1), mariadb_server_prepare => 1);
    my @s = map { $m->prepare("SELECT $_") } 1 .. 3;
    is(scalar(grep { defined } @s), 3, 'three statements prepared');
    my $four = $m->prepare('SELECT 4');
    ok(!$four, 'the fourth is refused');
    is($m->err, 1461, 'with ER_MAX_PREPARED_STMT_COUNT_REACHED');
    like($m->errstr // '', qr/max_prepared_statements.*current value: 3/,
         'which names the directive');
    undef $s[0];
    ok($m->prepare('SELECT 5'), 'after a CLOSE there is room again');
}
{
    $t->write_file_expand('big.conf', <<'EOF');
mysql {
    upstream c { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readwritesplit;
        upstream c;
        max_prepared_statements 2000000;
    }
}
EOF
    my ($rc, $out) = $t->test_config(conf => 'big.conf');
    ok($rc != 0 && $out =~ /big\.conf:\d+:\ max_prepared_statements
                            \ 2000000\ is\ more\ than\ 1048576/x,
       'max_prepared_statements has a bound, said with file:line')
        or diag($out);
}

# --- the raw protocol: types bound once, cursors, reload -------------------

# A result of the binary or text protocol: { err }, { ok, status } or
# { rows => [[...]], status } (strings, no NULLs), several when MORE_RESULTS.
sub lenenc {
    my ($p) = @_;
    my $c = ord substr($$p, 0, 1, '');
    return $c < 0xfb ? $c
         : $c == 0xfc ? unpack('v', substr($$p, 0, 2, ''))
         : $c == 0xfd ? unpack('V', substr($$p, 0, 3, '') . "\0")
         : unpack('Q<', substr($$p, 0, 8, ''));
}

sub read_result {
    my ($s) = @_;
    my (undef, $p) = read_packet($s);
    return { err => 'no answer' } unless defined $p;
    if (ord $p == 0xff) {
        my ($code, $msg) = unpack 'x v x x5 a*', $p;
        return { err => "$code $msg" };
    }
    if (ord $p == 0) {
        my $q = substr $p, 1;
        lenenc(\$q);
        lenenc(\$q);
        return { ok => 1, status => unpack('v', $q) };
    }
    my $n = lenenc(\$p);
    read_packet($s) for 1 .. $n;
    my (undef, $eof) = read_packet($s);
    my $status = unpack 'x x2 v', $eof;
    return { cursor => 1, status => $status } if $status & 0x40;
    my @rows = read_rows($s, $n, \$status);
    return { rows => \@rows, status => $status };
}

sub read_rows {
    my ($s, $n, $status) = @_;
    my @rows;
    for (;;) {
        my (undef, $p) = read_packet($s);
        last unless defined $p;
        if (ord $p == 0xfe && length $p < 9) {
            $$status = unpack 'x x2 v', $p;
            last;
        }
        substr($p, 0, 1 + int(($n + 9) / 8), '');   # 0x00, null bitmap
        push @rows, [ map { my $l = lenenc(\$p); substr($p, 0, $l, '') }
                      1 .. $n ];
    }
    return @rows;
}

sub rprepare {
    my ($s, $sql) = @_;
    send_packet($s, 0, "\x16$sql");
    my (undef, $p) = read_packet($s);
    return undef unless defined $p && ord $p == 0;
    my ($id, $cols, $params) = unpack 'x V v v', $p;
    for my $n ($params, $cols) {
        next unless $n;
        read_packet($s) for 1 .. $n + 1;        # definitions, EOF
    }
    return { id => $id, params => $params };
}

# execute(stmt, flags, types => [...] | undef (flag 0), values => [...])
use constant { LONGLONG => 8, STRING => 0xfe };
sub rexecute {
    my ($s, $st, %o) = @_;
    my $pl = pack('C V C V', 0x17, $st->{id}, $o{flags} // 0, 1);
    if ($st->{params}) {
        $pl .= "\0" x int(($st->{params} + 7) / 8);
        $pl .= $o{types} ? "\1" . join('', map { pack 'v', $_ }
                                           @{ $o{types} }) : "\0";
        my @t = @{ $o{types} // $o{as} };
        for my $i (0 .. $#t) {
            my $v = $o{values}[$i];
            $pl .= $t[$i] == LONGLONG ? pack('q<', $v)
                                      : chr(length $v) . $v;
        }
    }
    send_packet($s, 0, $pl);
    return read_result($s);
}

sub where_row {
    my ($r) = @_;
    return $r->{err} ? "error: $r->{err}"
         : !$r->{rows} ? 'no rows'
         : name_of($r->{rows}[0][0]) . ':' . $r->{rows}[0][1];
}

# a login that asks for multi-results (a CALL's result sets)
sub raw_login_multi {
    my $s = Sluice::Wire::raw_connect($t->port(0));
    my (undef, $g) = read_packet($s);
    my $gr = Sluice::Wire::parse_greeting($g) or return undef;
    my $token = Sluice::Wire::native_token('secret', $gr->{scramble});
    my $caps = 0x1 | 0x200 | 0x8000 | 0x80000 | 0x20000 | 0x40000;
    send_packet($s, 1, pack('V V C x23', $caps, 16 << 20, 45) . "app\0"
        . chr(length $token) . $token . "mysql_native_password\0");
    return $s;
}

my $s = raw_login_multi();
my (undef, $ok) = read_packet($s);
is(ord($ok // "\xff"), 0, 'raw login');
my $st = rprepare($s, 'SELECT CAST(@@server_id AS CHAR), CONCAT(?, \'\')');
ok($st && $st->{params} == 1, 'raw PREPARE, one parameter');
my $first = where_row(rexecute($s, $st, types => [LONGLONG],
                               values => [41]));
is($first, 'primary:41', 'the first EXECUTE: the primary (no replica '
   . 'backend was ready when it was prepared)');
# executes with new-params-bound-flag 0 from now on: the replica never gets
# types from the client, so what it runs with is what the proxy inserted
sub flag0_until_replica {
    my ($type, $value) = @_;
    my @seen;
    my $ok = wait_for(sub {
        push @seen, where_row(rexecute($s, $st, as => [$type],
                                       values => [$value]));
        $seen[-1] eq "replica:$value";
    }, timeout => 5);
    return $ok && !grep { !/^(?:primary|replica):\Q$value\E$/ } @seen;
}
ok(flag0_until_replica(LONGLONG, 42),
   'flag 0 on the replica: the types it never saw were sent along');
send_packet($s, 0, "\x03BEGIN");
read_result($s);
is(where_row(rexecute($s, $st, as => [LONGLONG], values => [43])),
   'primary:43', 'flag 0 on the primary inside a transaction');
send_packet($s, 0, "\x03COMMIT");
read_result($s);
is(where_row(rexecute($s, $st, types => [STRING], values => ['abc'])),
   'replica:abc', 'other types: the replica, where the EXECUTE brings them');
is(where_row(rexecute($s, $st, as => [STRING], values => ['xyz'])),
   'replica:xyz', 'then flag 0 there: it has them');
send_packet($s, 0, "\x03BEGIN");
read_result($s);
is(where_row(rexecute($s, $st, as => [STRING], values => ['in trx'])),
   'primary:in trx', 'flag 0 on the primary, which never got these types: '
   . 'the proxy put them in');
send_packet($s, 0, "\x03COMMIT");
read_result($s);

# long data goes to the primary, and the EXECUTE follows it there
send_packet($s, 0, pack('C V v', 0x18, $st->{id}, 0) . 'long data');
send_packet($s, 0, pack('C V C V', 0x17, $st->{id}, 0, 1) . "\0\0");
is(where_row(read_result($s)), 'primary:long data',
   'an EXECUTE after SEND_LONG_DATA runs where the data went');
ok(flag0_until_replica(STRING, 'again'), 'the next one on the replica');

# a CALL with two result sets, as a prepared statement: both come, then
# the CALL's own OK, and the session goes on (a session of its own: after
# a CALL, whose procedure may have changed the session's state, reads go
# to the primary)
my $cs = raw_login_multi();
read_packet($cs);
my $cst = rprepare($cs, 'SELECT CAST(@@server_id AS CHAR), CONCAT(?, \'\')');
my $call = rprepare($cs, 'CALL test.rwps_two()');
send_packet($cs, 0, pack('C V C V', 0x17, $call->{id}, 0, 1));
my @sets;
for (1 .. 5) {
    my $r = read_result($cs);
    push @sets, $r->{err} ? "error $r->{err}" : $r->{rows}
        ? join(',', map { join ' ', @$_ } @{ $r->{rows} }) : 'ok';
    last if $r->{err} || !($r->{status} & 8);       # MORE_RESULTS_EXISTS
}
is(join('|', @sets), '1|2 3|ok', 'a prepared CALL: two result sets, OK');
is(where_row(rexecute($cs, $cst, types => [STRING], values => ['on'])),
   'primary:on', 'the session goes on (on the primary: CALL may write, '
   . 'and set state)');

# a cursor: the EXECUTE opens it, FETCH reads it, on the same server
my $cur = rprepare($s, 'SELECT CAST(@@server_id AS CHAR), CAST(seq AS CHAR) '
                       . 'FROM test.seq_1_to_5');
my $open = rexecute($s, $cur, flags => 1);
ok($open->{cursor}, 'EXECUTE with a read-only cursor');
send_packet($s, 0, pack('C V V', 0x1c, $cur->{id}, 3));
my $status = 0;
my @f = read_rows($s, 2, \$status);
is(join(',', map { $_->[1] } @f), '1,2,3', 'FETCH 3 rows of the cursor');
send_packet($s, 0, pack('C V V', 0x1c, $cur->{id}, 3));
@f = read_rows($s, 2, \$status);
is(join(',', map { $_->[1] } @f), '4,5', 'FETCH the rest');

# --- a reload: the statements keep working ----------------------------------

# one-shot statements (prepare, execute once, close: Go's database/sql,
# PDO): the PREPARE's copy is on its way to the replica when the EXECUTE
# comes, which waits for it
my @one;
for my $i (1 .. 20) {
    my $o = rprepare($s, 'SELECT CAST(@@server_id AS CHAR), CONCAT(?, \'\')');
    push @one, where_row(rexecute($s, $o, types => [LONGLONG],
                                  values => [$i]));
    send_packet($s, 0, pack('C V', 0x19, $o->{id}));   # COM_STMT_CLOSE
}
my $on_replica = grep { /^replica:/ } @one;
cmp_ok($on_replica, '>=', 18, 'one-shot prepared reads: on the replica '
       . "($on_replica of 20)");
is(scalar(grep { !/^(?:primary|replica):\d+$/ } @one), 0,
   'each with its own value') or diag("@one");

# a read whose types only the replica got, retried on the primary when its
# replica connection is killed under it: the retry carries the types
my $sl = rprepare($s, 'SELECT CAST(@@server_id AS CHAR), '
                      . 'CONCAT(SLEEP(?), \'\')');
is(where_row(rexecute($s, $sl, types => [LONGLONG], values => [0])),
   'replica:0', 'a SLEEP(?) statement executed once, on the replica');
send_packet($s, 0, pack('C V C V', 0x17, $sl->{id}, 0, 1)
            . "\0\0" . pack('q<', 2));          # flag 0: no types
my ($victim) = wait_for(sub {
    $R->selectrow_array('SELECT id FROM information_schema.processlist '
        . q{WHERE info LIKE 'SELECT CAST(@@server_id AS CHAR), CONCAT(SLEEP%'})
}, what => 'the EXECUTE running on the replica');
$R->do("KILL CONNECTION $victim") if $victim;
is(where_row(read_result($s)), 'primary:0', 'its replica connection '
   . 'killed, the EXECUTE ran on the primary with the types put in');
ok(flag0_until_replica(STRING, 'back'), 'then a replica backend again');

# a statement whose types only the replica got, at a reload: the types go
# along with the handover, so an EXECUTE with flag 0 that runs on the
# primary there gets them put in
my $ho = rprepare($s, 'SELECT CAST(@@server_id AS CHAR), CONCAT(?, \'\')');
is(where_row(rexecute($s, $ho, types => [LONGLONG], values => [51])),
   'replica:51', 'a statement executed once, on the replica');

my ($old) = $t->worker_pids;
ok($t->reload, 'reload');
ok(wait_for(sub { $t->error_log =~ /worker process $old exited/ },
            what => 'the old worker gone'),
   'every session was handed over');
is(where_row(rexecute($s, $st, as => [STRING], values => ['after'])),
   'primary:after', 'after the reload the statement runs (on the primary, '
   . 'with the types it was given)');
send_packet($s, 0, "\x03BEGIN");
read_result($s);
is(where_row(rexecute($s, $ho, as => [LONGLONG], values => [52])),
   'primary:52', 'after the reload, flag 0 on the primary: the types the '
   . 'replica had came with the handover');
send_packet($s, 0, "\x03COMMIT");
read_result($s);
is($run->($sel, 13), 'primary:13',
   'a DBD statement prepared before the reload runs (on the primary)');
my $new = $d->prepare('SELECT @@server_id, ? * 2');
ok(wait_for(sub { $run->($new, 4) eq 'replica:8' }, timeout => 5),
   'a statement prepared after the reload runs on the replica');

send_packet($s, 0, "\x01");             # COM_QUIT
close $s;

# --- a replica dying with statements mapped to it ---------------------------

my $k = $t->dbh(mariadb_server_prepare => 1);
my $ks = $k->prepare('SELECT @@server_id, ?');
wait_for(sub { $run->($ks, 1) eq 'replica:1' }, timeout => 5);
my $kid = $k->selectrow_array(
    '/* sluice: route=replica */ SELECT CONNECTION_ID()');  # the replica's
my $off = length $t->error_log;
$R->do("KILL $kid");
ok(wait_for(sub { substr($t->error_log, $off) =~ /replica .* dropped/ },
            what => 'the replica backend dropped'),
   'the replica backend of a session with statements on it dies');
is($run->($ks, 2), 'primary:2', 'the statement runs on the primary');
ok(wait_for(sub { $run->($ks, 3) eq 'replica:3' }, timeout => 5),
   'and on a new replica backend once prepared there');
$t->allow_log(qr/dropped from the session/);

# --- sysbench with prepared statements ---------------------------------------
SKIP: {
    my $sb = eval { Sluice::Test::find_bin('sysbench') };
    skip 'no sysbench', 2
        unless $t->have($sb, 'no sysbench (contrib/deps.sh installs it)');
    # 8 x 20000 rows: 4 threads do not deadlock each other (4 x 10000
    # did, once in a few runs, through sluice or not), so any error fails
    my @c = ('--db-driver=mysql', '--mysql-db=test', '--tables=8',
             '--table-size=20000', '--mysql-ignore-errors=none');
    my $sock = $t->primary_socket;
    $P->do("DROP TABLE IF EXISTS sbtest$_") for 1 .. 8;
    my $prep = `$sb oltp_read_write @c --mysql-user=root --mysql-password= --mysql-socket=$sock prepare 2>&1`;
    diag($prep) if $?;
    wait_for(sub { (eval { $R->selectrow_array(
                       'SELECT COUNT(*) FROM sbtest8') } // 0) == 20000 },
             timeout => 60, what => 'sysbench tables on the replica');
    my $execs = sub { ($R->selectrow_array(
        "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'"))[1] };
    my $b0 = $execs->();
    my @run = ('--mysql-user=app', '--mysql-password=secret',
               '--mysql-host=127.0.0.1', '--mysql-port=' . $t->port(0),
               '--threads=4', '--time=3', '--db-ps-mode=auto', 'run');
    my $ro = `$sb oltp_read_only @c --skip_trx=on @run 2>&1`;
    ok($? == 0 && $ro =~ /ignored errors:\s+0\s/
       && $ro =~ /reconnects:\s+0\s/ && $execs->() - $b0 > 1000,
       'oltp_read_only, prepared: no error, executed on the replica')
        or diag($ro, "\nreplica executes: ", $execs->() - $b0);
    my $rw = `$sb oltp_read_write @c @run 2>&1`;
    ok($? == 0 && $rw =~ /ignored errors:\s+0\s/
       && $rw =~ /reconnects:\s+0\s/,
       'oltp_read_write, prepared: no error, no reconnect') or diag($rw);
}
