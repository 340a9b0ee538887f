#!/usr/bin/perl

# The cache filter and prepared statements (issue 10): the binary
# protocol's COM_STMT_EXECUTE of a prepared SELECT is answered from the
# cache, byte for byte what the server sent (raw protocol: NULL
# parameters and columns, a blob, 4-byte UTF-8, INT, BIGINT, DOUBLE,
# DECIMAL, DATETIME, VARCHAR), keyed by the statement, its parameters'
# types and values: other values are other entries, an EXECUTE without
# types (new-params-bound-flag 0) uses the statement's last ones, and one
# that binds types the server does not have yet goes to the server.  Not
# cached: a cursor, long data, inside a read-write transaction, a
# denylisted function; a write (text or prepared) invalidates.  MariaDB's
# CACHE_METADATA: only responses with the column definitions are kept,
# under their own key.  Real clients: DBD::MariaDB with server-side
# prepares and PHP's mysqli.  Whether the server ran an EXECUTE is told by
# its Com_stmt_execute.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_login read_packet send_packet packet parse_greeting
                    read_response stmt_prepare stmt_execute);

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE test.cps_t (id INT PRIMARY KEY, i INT NULL, '
       . 'big BIGINT, d DOUBLE, dec3 DECIMAL(10,3), dt DATETIME, '
       . 'v VARCHAR(64), b BLOB)');
$p->do("INSERT INTO test.cps_t VALUES "
       . "(1, NULL, 9007199254740993, 2.5, 12.345, '2020-01-01 00:00:00', "
       . "'one', NULL), "
       . "(2, 42, -5, -0.125, -7.000, '2021-06-01 12:34:56', "
       . "'\x{1F42C} dolphin', REPEAT('x', 3000)), "
       . "(3, 7, 0, 1e300, 0.001, NULL, NULL, 'b')");

$t->run_cache(plan => 63);

sub executed { Sluice::Test::server_status($p, 'Com_stmt_execute') }

# EXECUTEs reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_stmt_execute', $_[0]) }

use constant {
    T_DOUBLE => 5, T_LONG => 3, T_LONGLONG => 8, T_VAR_STRING => 253,
    CACHE_METADATA => 0x10,
};

sub int_p    { [T_LONG, defined $_[0] ? pack('l<', $_[0]) : undef] }
sub bigint_p { [T_LONGLONG, pack('q<', $_[0])] }
sub double_p { [T_DOUBLE, pack('d<', $_[0])] }
sub str_p    { [T_VAR_STRING, chr(length $_[0]) . $_[0]] }

# A raw session (no DEPRECATE_EOF) logged in; with mariadb_caps, once the
# worker's greeting offers them (it learns them from the server).
sub raw {
    my ($port, %o) = @_;
    my $s;
    wait_for(sub {
        $s = raw_login($port, %o) or return 0;
        my (undef, $ok) = read_packet($s);
        return 0 unless defined $ok && ord($ok) == 0;
        return 1 unless $o{mariadb_caps};
        send_packet($s, 0, "\x03SELECT 1");     # the worker meets it
        read_response($s);
        my $g = parse_greeting(Sluice::Wire::greeting_of($port));
        return 0 unless $g->{mariadb_caps} & $o{mariadb_caps};
        $s = raw_login($port, %o) or return 0;
        (undef, $ok) = read_packet($s);
        return defined $ok && ord($ok) == 0;
    }, what => 'a raw session');
    return $s;
}

sub execute {
    my ($s, %o) = @_;
    send_packet($s, 0, stmt_execute(%o));
    return read_response($s);
}

my $sql = 'SELECT id, i, big, d, dec3, dt, v, b, ? AS pi, ? AS ps, '
    . '? AS pd, ? AS pb FROM test.cps_t WHERE id <= ? ORDER BY id';
my @args = (int_p(undef), str_p("\xf0\x9f\x90\xac"), double_p(0.5),
            bigint_p(-3), int_p(3));

# --- the same EXECUTE twice: the second is a hit, the server's bytes ---------

my $direct = raw($t->primary_port);
my ($did) = stmt_prepare($direct, $sql);
my $want = execute($direct, id => $did, params => \@args);
ok(defined $want && length $want > 3000 && $want =~ /\xf0\x9f\x90\xac/,
   'the server answers the EXECUTE directly (NULLs, a blob, 4-byte UTF-8)');

my $a = raw($t->port(0));
my ($id, $np) = stmt_prepare($a, $sql);
is($np, 5, 'prepared through the proxy: 5 parameters');
my ($first, $hit);
is(served(sub { $first = execute($a, id => $id, params => \@args) }), 1,
   'the first EXECUTE reaches the server');
is($first, $want, 'and gets the server\'s bytes');
is(served(sub { $hit = execute($a, id => $id, params => \@args) }), 0,
   'the same EXECUTE again is a hit: the server does not see it');
is($hit, $want, 'the hit is byte-identical to the server\'s answer');
is(served(sub { $hit = execute($a, id => $id, params => \@args,
                               bound => 0) }), 0,
   'without types (new-params-bound-flag 0): the same entry');
is($hit, $want, 'with the same bytes');
my $st = $t->cache_stats('qc');
ok($st->{hits} >= 2 && $st->{lookups} >= 2, "zone counters: hits "
   . "$st->{hits}, lookups $st->{lookups}");

# other values, other entries
my @other = @args;
$other[4] = int_p(1);
my $one;
is(served(sub { $one = execute($a, id => $id, params => \@other,
                               bound => 0) }), 1,
   'other values: a miss');
ok($one ne $want && length $one < length $want, 'with its own rows');
is(served(sub { $hit = execute($a, id => $id, params => \@other,
                               bound => 0) }), 0, 'then a hit');
is($hit, $one, 'of its bytes');

# a malformed EXECUTE (values cut short, or no statement id): the server's
# error, nothing kept, and the session goes on
my $cut = stmt_execute(id => $id, params => \@other, bound => 0);
for my $bad (substr($cut, 0, length($cut) - 3), "\x17\x01\x00") {
    send_packet($a, 0, $bad);
    my $r = read_response($a);
    ok(defined $r && ord(substr($r, 4)) == 0xff,
       'a malformed EXECUTE gets the server\'s error ('
       . length($bad) . ' bytes)');
}
# the server's error is the session's last: the next read goes to the
# server (SHOW WARNINGS would show the error after a hit), then hits
is(served(sub { $hit = execute($a, id => $id, params => \@other,
                               bound => 0) }), 1,
   'then the same EXECUTE whole goes to the server, which clears its error');
is($hit, $one, 'with the same bytes');
is(served(sub { $hit = execute($a, id => $id, params => \@other,
                               bound => 0) }), 0, 'and is a hit again');
my @null = @args;
$null[4] = int_p(undef);
is(served(sub { execute($a, id => $id, params => \@null) for 1 .. 2 }), 1,
   'a NULL where a value was: another entry');

# types that the server does not have go there: another session's first
# EXECUTE binds them; its next one, without types, is a hit
my $b = raw($t->port(0));
my ($bid) = stmt_prepare($b, $sql);
is(served(sub { $hit = execute($b, id => $bid, params => \@args) }), 1,
   'another session\'s first EXECUTE (new types for its server) goes to '
   . 'the server');
is($hit, $want, 'the same bytes');
is(served(sub { $hit = execute($b, id => $bid, params => \@args,
                               bound => 0) }), 0,
   'its next, without types, is a hit');
my @b2 = @args;
$b2[4] = int_p(2);
is(served(sub { $hit = execute($b, id => $bid, params => \@b2,
                               bound => 0) }), 1,
   'a miss without types: to the server');
ok(defined $hit && ord(substr($hit, 4)) == 12, 'which has them: rows, no '
   . 'ERR (had the first EXECUTE been a hit, it would not)');
# other types, same values' bytes: another entry
my @unsigned = @args;
$unsigned[3] = [T_LONGLONG | 0x8000, pack('q<', -3)];
my $u;
is(served(sub { $u = execute($b, id => $bid, params => \@unsigned) }), 1,
   'other types (BIGINT UNSIGNED): not the signed one\'s entry');
isnt($u, $want, 'its column definition says UNSIGNED');
is(served(sub { $u = execute($b, id => $bid, params => \@unsigned,
                             bound => 0) }), 0,
   'then, without types, its own entry');
is($u, execute($b, id => $bid, params => \@unsigned), 'unsigned still');

# a text SELECT of the same text never meets the binary entry
my $text = 'SELECT id FROM test.cps_t WHERE id <= 3 ORDER BY id';
my ($tid) = stmt_prepare($a, $text);
execute($a, id => $tid) for 1 .. 2;
send_packet($a, 0, "\x03$text");
my $tr = read_response($a);
like($tr, qr/\x02\x00\x00.\x013/s, 'a text query of a prepared '
     . 'statement\'s text gets a text result (rows of strings)');

# --- CACHE_METADATA ----------------------------------------------------------

# The server skips the column definitions when the client has them (from
# the PREPARE, or an earlier EXECUTE): the key holds those the client has,
# and a response that changes them is not kept.
my $m = raw($t->port(0), mariadb_caps => CACHE_METADATA);
my ($mid) = stmt_prepare($m, $sql);
my ($m1, $m2, $m3);
is(served(sub { $m1 = execute($m, id => $mid, params => \@args) }), 1,
   'CACHE_METADATA: the first EXECUTE reaches the server');
like($m1, qr/\A.{4}\x0c\x01/s, 'with definitions other than the '
     . 'PREPARE\'s ("metadata follows" 1: the parameters\' types)');
is(served(sub { $m2 = execute($m, id => $mid, params => \@args,
                              bound => 0) }), 1,
   'that changed the client\'s definitions: not kept');
like($m2, qr/\A.{4}\x0c\x00/s, 'the next has none');
is(served(sub { $m3 = execute($m, id => $mid, params => \@args,
                              bound => 0) }), 0, 'and was kept: a hit');
is($m3, $m2, 'of the same bytes');
my $m4 = raw($t->port(0), mariadb_caps => CACHE_METADATA);
my ($mid4) = stmt_prepare($m4, $sql);
execute($m4, id => $mid4, params => \@args);
is(served(sub { $m3 = execute($m4, id => $mid4, params => \@args,
                              bound => 0) }), 0,
   'another session holding the same definitions gets that entry');
is($m3, $m2, 'the same bytes');
is(served(sub { $hit = execute($a, id => $id, params => \@args,
                               bound => 0) }), 0,
   'a session without CACHE_METADATA: its own entry');
is($hit, $want, 'with the definitions, without the byte');

# --- what is not cached ------------------------------------------------------

# a cursor: its rows come through COM_STMT_FETCH
is(served(sub { execute($a, id => $id, params => \@args, flags => 1)
                for 1 .. 2 }), 2, 'a cursor (flags 1) is not served');
my $after = execute($a, id => $id, params => \@args);
is($after, $want, 'and the next EXECUTE without one is served as before');

# long data: the value is not in the EXECUTE
my ($lid) = stmt_prepare($a, 'SELECT id, v FROM test.cps_t WHERE v = ?');
my $long = sub {
    my ($v) = @_;
    send_packet($a, 0, pack('C V v', 0x18, $lid, 0) . $v);
    return execute($a, id => $lid, params => [[T_VAR_STRING, '']]);
};
my @rows;
is(served(sub { @rows = map { $long->($_) } 'one', 'xyz' }), 2,
   'a statement with long data is not served');
like($rows[0], qr/one/, 'the first value\'s row');
unlike($rows[1], qr/one/, 'the second\'s, not the first\'s');

# a read-write transaction
send_packet($a, 0, "\x03BEGIN");
read_response($a);
is(served(sub { execute($a, id => $id, params => \@args, bound => 0)
                for 1 .. 2 }), 2,
   'inside a read-write transaction every EXECUTE reaches the server');
send_packet($a, 0, "\x03COMMIT");
read_response($a);

# a denylisted function
my ($nid) = stmt_prepare($a, 'SELECT NOW(6), id FROM test.cps_t WHERE id = ?');
is(served(sub { execute($a, id => $nid, params => [int_p(1)]) for 1 .. 2 }),
   2, 'NOW() in a prepared SELECT is not served');

# --- writes invalidate -------------------------------------------------------

my ($vid) = stmt_prepare($a, 'SELECT v FROM test.cps_t WHERE id = ?');
execute($a, id => $vid, params => [int_p(1)]) for 1 .. 2;
is(served(sub { execute($a, id => $vid, params => [int_p(1)]) }), 0,
   'cached');
send_packet($a, 0, "\x03UPDATE test.cps_t SET v = 'uno' WHERE id = 1");
read_response($a);
my $r;
is(served(sub { $r = execute($a, id => $vid, params => [int_p(1)]) }), 1,
   'a text UPDATE invalidates the prepared entry');
like($r, qr/uno/, 'the new value');
my ($wid) = stmt_prepare($a, 'UPDATE test.cps_t SET v = ? WHERE id = ?');
execute($a, id => $vid, params => [int_p(1)]);
execute($a, id => $wid, params => [str_p('eins'), int_p(1)]);
is(served(sub { $r = execute($a, id => $vid, params => [int_p(1)]) }), 1,
   'a prepared UPDATE invalidates it');
like($r, qr/eins/, 'the new value');
# MariaDB's id -1: the statement prepared last
execute($a, id => $vid, params => [int_p(1)]);
stmt_prepare($a, 'UPDATE test.cps_t SET v = ? WHERE id = ?');
execute($a, id => 0xffffffff, params => [str_p('un'), int_p(1)]);
is(served(sub { $r = execute($a, id => $vid, params => [int_p(1)]) }), 1,
   'an EXECUTE of the statement prepared last (id -1) invalidates it');
like($r, qr/\x02un/, 'the new value');

# --- real clients ------------------------------------------------------------

my $dbd = $t->dbh(mariadb_server_prepare => 1);
my $sth = $dbd->prepare('SELECT id, v, big, dt FROM test.cps_t WHERE id = ?');
my (@r1, @r2);
served(sub { $sth->execute(2); @r1 = $sth->fetchrow_array; $sth->finish });
is(served(sub { $sth->execute(2); @r2 = $sth->fetchrow_array;
                $sth->finish }), 0,
   'DBD::MariaDB, mariadb_server_prepare: the second EXECUTE is a hit');
is("@r2", "@r1", 'with the same row');

SKIP: {
    my $php = eval { Sluice::Test::find_bin('php') };
    skip 'no php with mysqli', 2 unless $t->have($php
        && system($php, '-r', 'exit(function_exists("mysqli_connect") '
                  . '? 0 : 1);') == 0,
        'no php with mysqli (contrib/deps.sh installs it)');
    $t->write_file('client.php', <<'PHP');
<?php
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
$db = new mysqli('127.0.0.1', 'app', 'secret', 'test', (int) $argv[1]);
$db->set_charset('utf8mb4');
$st = $db->prepare('SELECT id, v FROM test.cps_t WHERE id = ?');
$id = 2;
$st->bind_param('i', $id);
for ($k = 0; $k < (int) $argv[2]; $k++) {
    $st->execute();
    $st->bind_result($a, $b);
    $st->fetch();
    $st->free_result();
    echo "$a $b\n";
}
PHP
    my @out;
    my $run = sub {
        @out = `$php @{[ $t->testdir ]}/client.php @{[ $t->port(0) ]} $_[0]`;
    };
    is(served(sub { $run->(3) }), 1, 'PHP mysqli: three EXECUTEs of a '
       . 'prepared SELECT, one reaches the server');
    is(join('', @out), "2 \xf0\x9f\x90\xac dolphin\n" x 3,
       'each with the row');
}

# --- ALTER --------------------------------------------------------------------

# CACHE_METADATA: a statement prepared before an ALTER that changes its
# definitions: the server sends the new ones, which is not kept; then it
# is cached again
my $m5 = raw($t->port(0), mariadb_caps => CACHE_METADATA);
my ($mid5) = stmt_prepare($m5, 'SELECT id, v FROM test.cps_t WHERE id = ?');
execute($m5, id => $mid5, params => [int_p(3)]) for 1 .. 2;
is(served(sub { execute($m5, id => $mid5, params => [int_p(3)],
                        bound => 0) }), 0, 'cached before the ALTER');
send_packet($a, 0, "\x03ALTER TABLE test.cps_t MODIFY v VARCHAR(80)");
like(read_response($a), qr/\A.{4}\x00/s, 'ALTER TABLE');
# (the server counts an EXECUTE it prepares again after the ALTER twice)
my @alt = map { execute($m5, id => $mid5, params => [int_p(3)], bound => 0) }
              1 .. 2;
like($alt[0], qr/\A.{4}\x02\x01/s, 'after the ALTER: the new definitions '
     . '(not kept: they change what the client holds)');
like($alt[1], qr/\A.{4}\x02\x00/s, 'then an answer without them');
is(served(sub { $alt[2] = execute($m5, id => $mid5, params => [int_p(3)],
                                  bound => 0) }), 0, 'which was kept');
is($alt[2], $alt[1], 'the hit: the same bytes');
