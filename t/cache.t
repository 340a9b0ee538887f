#!/usr/bin/perl

# The cache filter (issue 10): a cached result is byte-identical to the
# server's (raw protocol: NULLs, a blob, 4-byte UTF-8, many columns), only
# the status flags are the session's; users and databases are isolated
# (cache_users shared shares users); SET NAMES, time_zone and sql_mode
# give other entries; the denylist is never cached, nor anything in a
# read-write transaction, READ ONLY ones only under READ COMMITTED; a
# write through one worker invalidates for the other; TTL and soft TTL
# (one session refreshes while another is served the entry);
# single flight (concurrent misses make one query: the server's
# Com_select); a zone of 1 MB evicts and never holds more; an entry over
# cache_max_entry_size streams intact and is not stored; a client that
# hangs up mid-store, or whose backend is killed mid-store, leaves no
# entry; rules (no_cache, ttl); reload keeps
# the cache and its counters, a new zone size starts empty; `sluice -s
# stats` logs the counters; configuration errors come with file:line;
# SHOW WARNINGS after a hit never shows an older statement's warning.
# Whether the server answered is told by its Com_select.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time sleep);
use Sluice::Test;
use Sluice::Wire qw(read_packet raw_login packet raw_connect read_response);

my $t = Sluice::Test->new;
$t->has('cache');

my $other = $t->name . '_o';
$t->server_user($other, 'o-pw');
my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE test.cache_t (id INT PRIMARY KEY, '
       . 'v VARCHAR(64), b BLOB, n INT NULL, ts TIMESTAMP NULL)');
$p->do("INSERT INTO test.cache_t VALUES (1, 'one', NULL, NULL, "
       . "'2020-01-01 00:00:00'), (2, '\xf0\x9f\x90\xac dolphin', "
       . "REPEAT('x', 3000), 42, '2021-06-01 12:00:00')");
$p->do('CREATE OR REPLACE TABLE test.cache_big (id INT PRIMARY KEY, '
       . 'pad CHAR(200))');
$p->do('INSERT INTO test.cache_big SELECT seq, REPEAT("p", 200) '
       . 'FROM seq_1_to_3000');
$p->do('CREATE DATABASE IF NOT EXISTS cache_db2');
$p->do('CREATE OR REPLACE TABLE cache_db2.cache_t (id INT PRIMARY KEY, '
       . 'v VARCHAR(64))');
$p->do("INSERT INTO cache_db2.cache_t VALUES (1, 'db2')");
$p->do("GRANT ALL ON cache_db2.* TO 'app'\@'%'");
$p->do("GRANT UPDATE ON test.cache_t TO '$other'\@'%'");

sub conf {
    my ($zone_size) = @_;
    return <<"EOF";
worker_processes 2;
events { worker_connections 200; }
mysql {
    buffer_size 16k;
    user app { password "secret"; }
    user $other { password "o-pw"; }
    cache_zone qc size=$zone_size;
    cache_zone tiny size=1m;
    upstream cluster {
        server %%PRIMARY%% role=primary;
        monitor_user monitor; monitor_password "monitor";
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache qc;
        cache_ttl 60s;
        cache_max_entry_size 64k;
        cache_rule never match=table "^test\\.cache_never\$" no_cache;
        cache_rule short match=text "^SELECT /\\* short \\*/" ttl=300ms;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache qc;
        cache_ttl 60s;
        cache_users shared;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache qc;
        cache_ttl 5s;
        cache_soft_ttl 1s;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache tiny;
        cache_ttl 60s;
    }
    server {
        listen 127.0.0.1:%%PORT_5%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache qc;
        cache_ttl 60s;
        cache_max_entry_size 16000k;
    }
    server {
        listen 127.0.0.1:%%PORT_6%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache qc;
        cache_ttl 20s;
        cache_soft_ttl 1s;
    }
    upstream split {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 1h;    # the replica is never seen in step after
                                # the first check: what it answers is not
                                # kept (t/cache_replica.t: when it is)
    }
    server {
        listen 127.0.0.1:%%PORT_4%%;
        router readwritesplit;
        upstream split;
        filters cache;
        cache qc;
        cache_ttl 60s;
    }
}
EOF
}
$t->write_file_expand('sluice.conf', conf('64m'));
$t->run;
$t->plan(110);

# Each worker learns the server's greeting (its MariaDB capabilities,
# which Connector/C then asks for) from its first backend connection: let
# both meet the server before the keys of DBD sessions are compared.
sub worker_of {
    my ($id) = @_;
    my ($l) = $t->grep_log(qr/\*\Q$id\E accepted/) or return 0;
    return $l =~ /\] (\d+): / ? $1 : 0;
}
{
    my %seen;
    for (1 .. 40) {
        my $k = $t->dbh or next;
        $k->selectrow_array('SELECT 1');
        $seen{ worker_of($k->{mariadb_thread_id}) } = 1;
        last if keys %seen == 2;
    }
}

sub com_select { Sluice::Test::server_status($p, 'Com_select') }

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

# --- raw protocol: a response's bytes ---------------------------------------

sub raw {
    my ($port, %o) = @_;
    my $s = raw_login($port, %o) or return undef;
    my (undef, $ok) = read_packet($s);
    return defined $ok && ord($ok) == 0 ? $s : undef;
}

# The whole response to a text query, as wire bytes (no DEPRECATE_EOF:
# defs, EOF, rows, EOF), or "ERR ..." / "OK".
sub raw_query {
    my ($s, $sql) = @_;
    syswrite($s, packet(0, "\x03$sql"));
    my $bytes = read_response($s) // return undef;
    my $pl = substr($bytes, 4);
    return 'ERR ' . substr($pl, 9) if ord $pl == 0xff;
    return 'OK' if ord $pl == 0;
    return $bytes;
}

# The status flags of the EOFs zeroed: the only bytes a hit may change.
sub no_status {
    my ($bytes) = @_;
    my ($out, $off) = ('', 0);
    while ($off + 4 <= length $bytes) {
        my $len = unpack('V', substr($bytes, $off, 3) . "\0");
        my $pkt = substr($bytes, $off, 4 + $len);
        substr($pkt, 7, 2) = "\0\0" if $len == 5 && substr($pkt, 4, 1) eq "\xfe";
        $out .= $pkt;
        $off += 4 + $len;
    }
    return $out;
}

my $wide = 'SELECT ' . join(', ', map { "id + $_ AS c$_" } 1 .. 40)
    . ', v, b, n, ts FROM test.cache_t ORDER BY id';
my $direct = raw($t->primary_port);
my $want = raw_query($direct, $wide);
ok(defined $want && length $want > 3000, 'the server answers the wide '
   . 'query directly (NULLs, a 3000-byte blob, 4-byte UTF-8, 44 columns)');
my $c = raw($t->port(0));
my ($first, $hit);
is(served(sub { $first = raw_query($c, $wide) }), 1, 'a miss reaches the '
   . 'server');
is(served(sub { $hit = raw_query($c, $wide) }), 0, 'the same statement '
   . 'again is a hit: the server does not see it');
is($first, $want, 'the stored response is the server\'s, byte for byte');
is(no_status($hit), no_status($want), 'the hit is byte-identical to the '
   . 'server\'s answer but for the status flags');
my $c2 = raw($t->port(0));
is(served(sub { $hit = raw_query($c2, $wide) }), 0, 'another session of '
   . 'the same user gets the hit');
is(no_status($hit), no_status($want), 'the same bytes');

# a READ ONLY transaction under REPEATABLE READ reads its snapshot: the
# cache neither serves it nor keeps what it reads (t/cache_snapshot.t);
# under READ COMMITTED each statement reads what is committed when it
# starts, as in autocommit, and the hit's status flags are the session's
# (SERVER_STATUS_IN_TRANS, 0x0001)
raw_query($c2, 'START TRANSACTION READ ONLY');
is(served(sub { $hit = raw_query($c2, $wide) }), 1, 'a READ ONLY '
   . 'transaction under REPEATABLE READ goes to the server');
raw_query($c2, 'COMMIT');
raw_query($c2, 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
raw_query($c2, 'START TRANSACTION READ ONLY');
is(served(sub { $hit = raw_query($c2, $wide) }), 0, 'under READ '
   . 'COMMITTED it is served from the cache');
my $last_eof = substr($hit, -2);
ok(unpack('v', $last_eof) & 1, 'with the session\'s status flags: in a '
   . 'transaction');
raw_query($c2, 'COMMIT');
ok(!(unpack('v', substr(raw_query($c2, $wide), -2)) & 1),
   'and after COMMIT, not');

# --- isolation ----------------------------------------------------------

my $q1 = 'SELECT id, v FROM cache_t WHERE id = 1';
my $a = $t->dbh;
my $o = $t->dbh(user => $other, password => 'o-pw');
is(served(sub { $a->selectrow_array($q1) }), 1, 'user app: a miss');
is(served(sub { $a->selectrow_array($q1) }), 0, 'user app: a hit');
is(served(sub { $o->selectrow_array($q1) }), 1, 'another user: a miss of '
   . 'its own (users are isolated by default)');
my $sh1 = $t->dbh(port => $t->port(1));
my $sh2 = $t->dbh(port => $t->port(1), user => $other, password => 'o-pw');
served(sub { $sh1->selectrow_array($q1) });
is(served(sub { $sh2->selectrow_array($q1) }), 0, 'cache_users shared: '
   . 'another user gets the first one\'s entry');
my $d2 = $t->dbh(database => 'cache_db2');
my @r;
is(served(sub { @r = $d2->selectrow_array($q1) }), 1, 'the same text in '
   . 'another default database: a miss');
is($r[1], 'db2', 'and the right database\'s row');
ok($d2->do('USE test'), 'USE test');
is(served(sub { @r = $d2->selectrow_array($q1) }), 0, 'after USE, the '
   . 'entry of that database');
is($r[1], 'one', 'with its row');

# --- session state: SET NAMES, time_zone, sql_mode ---------------------------

my $tsq = 'SELECT ts FROM cache_t WHERE id = 1';
my $z = $t->dbh;
served(sub { $z->selectrow_array($tsq) });
ok($z->do("SET time_zone = '+05:00'"), 'SET time_zone');
my ($ts);
is(served(sub { ($ts) = $z->selectrow_array($tsq) }), 1, 'another '
   . 'time_zone: a miss');
is($ts, '2020-01-01 05:00:00', 'the TIMESTAMP in the new time zone');
is(served(sub { ($ts) = $z->selectrow_array($tsq) }), 0, 'then a hit');
is($ts, '2020-01-01 05:00:00', 'still in the session\'s time zone');
ok($z->do('SET NAMES latin1'), 'SET NAMES latin1');
is(served(sub { $z->selectrow_array($tsq) }), 1, 'another character set: '
   . 'a miss');
ok($z->do("SET sql_mode = 'ANSI_QUOTES'"), 'SET sql_mode');
is(served(sub { $z->selectrow_array($tsq) }), 1, 'another sql_mode: a miss');
ok($z->do('SET @x = 5'), 'a user variable');
is(served(sub { $z->selectrow_array($tsq) }), 0, 'changes no key: a hit');

# --- what is never cached ---------------------------------------------------

my @never = (
    map({ "SELECT $_, id FROM cache_t WHERE id = 1" }
        'NOW()', 'RAND()', 'UUID()', 'CONNECTION_ID()', 'CURRENT_USER()',
        'USER()', 'DATABASE()', 'UNIX_TIMESTAMP()', 'CURDATE()',
        'SYSDATE()', 'LAST_INSERT_ID()', 'FOUND_ROWS()', 'ROW_COUNT()',
        'UUID_SHORT()', 'LOCALTIMESTAMP', 'CURRENT_TIMESTAMP',
        'IS_FREE_LOCK("x")', 'SLEEP(0)', 'BENCHMARK(1, 1)',
        'CONVERT_TZ(ts, "+00:00", "+01:00")', '@@version', '@x',
        # the rest of MaxScale's list
        'CURRENT_DATE', 'CURRENT_TIME', 'CURTIME()', 'ENCRYPT("x", "ab")',
        'GET_LOCK("cx", 0) + RELEASE_LOCK("cx")', 'IS_USED_LOCK("x")',
        'LOAD_FILE("/nonexistent")', 'LOCALTIME',
        'MASTER_POS_WAIT("x", 4, 0.01)', 'SESSION_USER()',
        'SYSTEM_USER()'),
    'SELECT id INTO @into FROM cache_t WHERE id = 1',
    'SELECT SQL_NO_CACHE id FROM cache_t WHERE id = 1',
    'SELECT id FROM cache_t WHERE id = 1 FOR UPDATE',
    'SELECT id FROM cache_t WHERE id = 1 LOCK IN SHARE MODE',
    'SELECT COUNT(*) FROM information_schema.tables',
    'SELECT COUNT(*) FROM mysql.db',
    'SELECT COUNT(*) FROM performance_schema.threads',
    'SELECT * FROM sys.version',
    'SELECT id FROM test.cache_never',
);
$p->do('CREATE OR REPLACE TABLE test.cache_never (id INT)');
my $n = $t->dbh;
my @cached = grep {
    my $sql = $_;
    served(sub { $n->selectall_arrayref($sql) for 1 .. 2 }) != 2;
} @never;
is("@cached", '', 'none of ' . scalar(@never) . ' denied statements '
   . '(functions, SQL_NO_CACHE, locking reads, system schemas, a no_cache '
   . 'rule) is served from the cache');

# a read-write transaction: not served, not stored
my $w = $t->dbh;
ok($w->do('BEGIN'), 'BEGIN');
is(served(sub { $w->selectrow_array($q1) for 1 .. 2 }), 2, 'inside a '
   . 'read-write transaction every read reaches the server');
ok($w->do('COMMIT'), 'COMMIT');

# --- invalidation across workers ---------------------------------------------

my $reader = $t->dbh;
my $writer;
for (1 .. 30) {
    my $k = $t->dbh or next;
    if (worker_of($k->{mariadb_thread_id})
        != worker_of($reader->{mariadb_thread_id}))
    {
        $writer = $k;
        last;
    }
    $k->disconnect;
}
ok($writer, 'a reader and a writer on different workers');
my $q2 = 'SELECT v FROM cache_t WHERE id = 2';
served(sub { $reader->selectrow_array($q2) });
is(served(sub { $reader->selectrow_array($q2) }), 0, 'the reader\'s entry');
ok($writer->do("UPDATE cache_t SET v = 'changed' WHERE id = 2"),
   'the writer updates the table through the other worker');
my ($v);
is(served(sub { ($v) = $reader->selectrow_array($q2) }), 1, 'the reader\'s '
   . 'next read reaches the server');
is($v, 'changed', 'and sees the write');
# a write in a transaction invalidates at COMMIT
served(sub { $reader->selectrow_array($q2) });
$writer->do('BEGIN');
$writer->do("UPDATE cache_t SET v = 'in trx' WHERE id = 2");
is(served(sub { ($v) = $reader->selectrow_array($q2) }), 0, 'an '
   . 'uncommitted write: the entry stands (the other session cannot see '
   . 'it)');
$writer->do('COMMIT');
is(served(sub { ($v) = $reader->selectrow_array($q2) }), 1, 'after the '
   . 'COMMIT, a miss');
is($v, 'in trx', 'with the committed value');

# --- TTL, soft TTL, rules -------------------------------------------------------

my $sq = 'SELECT /* short */ v FROM cache_t WHERE id = 1';
served(sub { $a->selectrow_array($sq) });
is(served(sub { $a->selectrow_array($sq) }), 0, 'rule "short": a hit');
ok(wait_for(sub { served(sub { $a->selectrow_array($sq) }) == 1 },
            timeout => 5), 'past its ttl=300ms, a miss');
my $soft = $t->dbh(port => $t->port(2));
my $sf = 'SELECT v FROM cache_t WHERE id = 1 AND 1 = 1';
served(sub { $soft->selectrow_array($sf) });
# (hits until the soft ttl passes; the first read past it refreshes, and
# the refreshed entry has a whole soft ttl ahead: no race with a loaded
# host, as a 300 ms window and a sleep had)
ok(wait_for(sub { served(sub { $soft->selectrow_array($sf) }) == 1 },
            timeout => 5),
   'past the soft ttl (1s): one read refreshes from the server');
is(served(sub { $soft->selectrow_array($sf) }), 0, 'and the refreshed entry '
   . 'serves the next');

# while one session refreshes an entry past its soft ttl, the others are
# served the entry (they neither wait nor go to the server)
{
    my $sq2 = 'SELECT COUNT(*) FROM cache_big a, cache_big b, cache_big c '
        . 'WHERE c.id < 4';
    my $s1 = $t->dbh(port => $t->port(6));
    my $t0 = time;
    $s1->selectrow_array($sq2);
    my $dur = time - $t0;
    sleep 1.1 - $dur if $dur < 1.1;      # past the soft ttl
    my $c0 = com_select();
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $k = $t->dbh(port => $t->port(6));
        $k->selectrow_array($sq2);      # the refresh: the server
        POSIX::_exit(0);
    }
    wait_for(sub { com_select() > $c0 }, timeout => 5);
    my $s2 = $t->dbh(port => $t->port(6));
    my $t1 = time;
    my ($cnt) = $s2->selectrow_array($sq2);
    my $took = time - $t1;
    waitpid($pid, 0);
    is($cnt, 3000 * 3000 * 3, 'soft ttl: a read during the refresh has the '
       . 'right count');
    ok($took < $dur / 2, sprintf('and is served from the entry while the '
       . 'refresh runs (%.3f s, the query takes %.3f s)', $took, $dur));
    is(com_select() - $c0, 1, 'only the refresh reached the server');
}

# --- single flight -------------------------------------------------------------

my $slow = 'SELECT COUNT(*) FROM cache_big a, cache_big b WHERE a.id < 1500';
my @kids;
my $sf0 = com_select();
for my $i (1 .. 6) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $k = $t->dbh or POSIX::_exit(1);
        my ($cnt) = $k->selectrow_array($slow);
        POSIX::_exit(defined $cnt && $cnt == 1499 * 3000 ? 0 : 2);
    }
    push @kids, $pid;
}
my $bad = 0;
for (@kids) { waitpid($_, 0); $bad++ if $? }
is($bad, 0, 'six concurrent sessions got the right count');
is(com_select() - $sf0, 1, 'from one query to the server (single flight)');

# --- size limits, a client gone mid-store --------------------------------------

my $bigq = 'SELECT id, pad FROM cache_big ORDER BY id';   # ~620 KB
my $rows;
is(served(sub { $rows = $a->selectall_arrayref($bigq) }), 1, 'a result '
   . 'over cache_max_entry_size (64k)');
is(scalar @$rows, 3000, 'streamed intact');
is(served(sub { $a->selectall_arrayref($bigq) }), 1, 'and not stored');

my $half = 'SELECT id, pad FROM cache_big WHERE id <= 200';  # ~41 KB
{
    my $s = raw($t->port(0));
    syswrite($s, packet(0, "\x03$half"));
    read_packet($s);            # the column count, then hang up
    close $s;
}
my $hv;
ok(wait_for(sub { served(sub { $hv = $a->selectall_arrayref($half) }) == 1
            }, timeout => 5), 'a client that hung up mid-store left no '
   . 'entry: the next read reaches the server');
is(scalar @$hv, 200, 'and gets every row');
is(served(sub { $a->selectall_arrayref($half) }), 0, 'which is stored now');

# --- in front of readwritesplit ---------------------------------------------

my $r = $t->replica_dbh;
wait_for(sub { $r->selectrow_array('SELECT COUNT(*) FROM test.cache_t') },
         what => 'the table on the replica');
my $rsq = 'SELECT id, v FROM cache_t WHERE id = 1 AND 2 = 2';
my $replica_conns = sub {
    ($r->selectrow_array('SELECT COUNT(*) FROM information_schema.processlist '
                         . 'WHERE user = ?', undef, $other))[0];
};
{
    my $w1 = $t->dbh(port => $t->port(4), user => $other, password => 'o-pw');
    # a write the monitor's last check has not seen: cache_t's replica
    # answers are not known to be in step
    $w1->do("UPDATE cache_t SET v = v WHERE id = 1");
    is(served(sub { $w1->selectrow_array($rsq) for 1 .. 2 }), 0,
       'readwritesplit: reads served by the replica (the primary saw none)');
    ok($replica_conns->() >= 1, 'its replica backend opened');
    $w1->disconnect;
}
ok(wait_for(sub { $replica_conns->() == 0 }, what => 'the replica backend '
            . 'closed'), 'that session is gone');
my $w2 = $t->dbh(port => $t->port(4), user => $other, password => 'o-pw');
my $rsp = "/* sluice: route=primary */ $rsq";
is(served(sub { $w2->selectrow_array($rsp) }), 1, 'a read the primary '
   . 'answers is kept');
is(served(sub { $w2->selectrow_array($rsp) for 1 .. 3 }), 0, 'then hits');
is($replica_conns->(), 0, 'a session served only the primary and hits '
   . 'opened no replica backend');
my $rst = zone_stats('qc');
cmp_ok($rst->{replica} // 0, '>=', 2, 'what the replica answered was not '
       . 'kept (it may be behind an invalidated write)');
ok($w2->do("UPDATE cache_t SET v = 'rws' WHERE id = 1"), 'a write through '
   . 'readwritesplit');
my ($fresh) = ($w2->selectrow_array($rsp))[1];
is($fresh, 'rws', 'invalidates: the next read sees it');

# --- SHOW WARNINGS after a hit ---------------------------------------------------

# the server's warnings are its last statement's; a hit must not leave
# another statement's there for the client's SHOW WARNINGS
my $wq = 'SELECT v FROM cache_t WHERE id = 2 AND 9 = 9';
my $wd = $t->dbh;
served(sub { $wd->selectrow_array($wq) });
is(served(sub { $wd->selectrow_array($wq) }), 0, 'a read kept');
$wd->selectrow_array('SELECT 1/0');                 # a warning
is(served(sub { $wd->selectrow_array($wq) }), 1, 'after a statement with a '
   . 'warning the read goes to the server (which clears the warning)');
is(scalar @{ $wd->selectall_arrayref('SHOW WARNINGS') }, 0,
   'SHOW WARNINGS: none, as for the read');
is(served(sub { $wd->selectrow_array($wq) }), 0, 'then hits again');
is(scalar @{ $wd->selectall_arrayref('SHOW WARNINGS') }, 0,
   'and SHOW WARNINGS after the hit: none');

# --- a write through another zone's server -----------------------------------

my $zq = 'SELECT v FROM cache_t WHERE id = 1 AND 7 = 7';
my $zr = $t->dbh;                                   # zone qc
served(sub { $zr->selectrow_array($zq) });
is(served(sub { $zr->selectrow_array($zq) }), 0, 'zone qc keeps a read');
ok($t->dbh(port => $t->port(3))->do("UPDATE cache_t SET v = 'zone' "
   . 'WHERE id = 1'), 'a write through a server of zone tiny');
my $zv;
is(served(sub { ($zv) = $zr->selectrow_array($zq) }) . " $zv", '1 zone',
   'invalidates zone qc too: the next read reaches the server');

# --- a small zone evicts and never grows -------------------------------------

my $tz = $t->dbh(port => $t->port(3));
for my $i (1 .. 60) {
    $tz->selectall_arrayref("SELECT id, pad FROM cache_big WHERE id <= 100 "
                            . "AND $i = $i");
}
my $off = length $t->error_log;
my ($src) = $t->_capture(cmd => [ $t->binary, '-p', $t->testdir . '/',
    '-c', $t->testdir . '/sluice.conf', '-s', 'stats' ]);
is($src, 0, 'sluice -s stats');
my ($line) = wait_for(sub {
    substr($t->error_log, $off) =~ /(cache zone "tiny": lookups=.*)/
        ? $1 : undef }, what => 'the stats line');
my %st = $line ? $line =~ /(\w+)=(\d+)/g : ();
cmp_ok($st{evictions} // 0, '>', 0, '60 entries of ~21 KB in a 1 MB zone: '
       . 'evictions') or diag($line);
cmp_ok($st{bytes} // 1 << 30, '<=', 1 << 20, 'the entries never hold more '
       . 'than the zone');
is(served(sub { $tz->selectall_arrayref("SELECT id, pad FROM cache_big "
                                        . "WHERE id <= 100 AND 60 = 60") }),
   0, 'the most recent entry is still there');
like(substr($t->error_log, $off), qr/rule "short": matches=\d+ hits=\d+/,
     'per-rule counters are logged');

# --- a worker killed while it streams a hit ---------------------------------

# a client with a tiny receive window holds the hit's reference while the
# worker waits to send the rest of it; the worker is killed
use Socket qw(PF_INET SOCK_STREAM SOL_SOCKET SO_RCVBUF pack_sockaddr_in
              inet_aton);
sub slow_login {
    socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
    setsockopt($s, SOL_SOCKET, SO_RCVBUF, 2048);
    connect($s, pack_sockaddr_in($t->port(5), inet_aton('127.0.0.1')))
        or die "connect: $!";
    my (undef, $g) = read_packet($s);
    my ($id) = unpack('V', substr($g, index($g, "\0", 1) + 1, 4));
    my $gr = Sluice::Wire::parse_greeting($g);
    my $token = Sluice::Wire::native_token('secret', $gr->{scramble});
    Sluice::Wire::send_packet($s, 1, pack('V V C x23', 0x1 | 0x200 | 0x8000
        | 0x80000, 16 << 20, 45) . "app\0" . chr(length $token) . $token
        . "mysql_native_password\0");
    my (undef, $ok) = read_packet($s);
    return ($s, $id);
}
# ~8.8 MB: more than the kernel's socket buffers take in
my $hugeq = 'SELECT a.id, a.pad FROM test.cache_big a, test.cache_big b '
    . 'WHERE b.id <= 14';
my $rawbig = raw($t->port(5));
my $whole = raw_query($rawbig, $hugeq);
cmp_ok(length($whole // ''), '>', 8_000_000, 'an 8.8 MB result');
is(served(sub { raw_query($rawbig, $hugeq) }), 0, 'kept: the next is a hit');
my ($slowc, $sid) = slow_login();
syswrite($slowc, packet(0, "\x03$hugeq"));
require IO::Select;
# the first bytes came: the hit is pinned and the rest waits on the window
IO::Select->new($slowc)->can_read(10);
my $victim = worker_of($sid);

ok($victim, 'a slow client reads it through a 2 KB window');
my $koff = length $t->error_log;
$t->kill_worker(pid => $victim);
ok(wait_for(sub { substr($t->error_log, $koff)
                  =~ /cache zone "qc": \d+ reference\(s\) of process $victim given back/ },
            what => 'the reference given back'),
   'the master gives back the reference the killed worker held');
close $slowc;
my $again;
is(served(sub { $again = raw_query(raw($t->port(5)), $hugeq) }), 0,
   'the other workers go on serving that entry');
is(length($again // ''), length($whole), 'whole');

# --- a backend killed mid-store ----------------------------------------------

# the server's connection is killed while the answer streams to a slow
# client: that session ends, and nothing of the answer is kept
my $hugeq2 = "$hugeq AND 2 = 2";
my ($slow2) = slow_login();
syswrite($slow2, packet(0, "\x03$hugeq2"));
IO::Select->new($slow2)->can_read(10);
my $victim_conn;
ok(wait_for(sub {
    ($victim_conn) = $p->selectrow_array('SELECT id FROM '
        . 'information_schema.processlist WHERE info LIKE ? AND id <> '
        . 'CONNECTION_ID()', undef, '%AND 2 = 2%');
    $victim_conn }, what => 'the server streaming the answer'),
   'the server streams the answer to a slow client');
$p->do("KILL $victim_conn");
# (what was on its way drains first: read it as it comes)
ok(wait_for(sub {
    while (IO::Select->new($slow2)->can_read(0.5)) {
        return 1 if !sysread($slow2, my $junk, 1 << 20);  # EOF or reset
    }
    return 0;
}, what => 'the session to end', timeout => 60), 'the client\'s session '
   . 'ends with its backend');
close $slow2;
my $after;
is(served(sub { $after = raw_query(raw($t->port(5)), $hugeq2) }), 1,
   'no half entry: the next read reaches the server');
is(length($after // ''), length($whole), 'and gets the whole answer');

# --- reload ----------------------------------------------------------------

# (a session that connects while the old workers still listen is handed
# over, and such a session is not served from the cache: wait for them)
sub reload_all {
    my %old = map { $_ => 1 } $t->worker_pids;
    return $t->reload && wait_for(sub { !grep { $old{$_} } $t->worker_pids },
                                  what => 'the old workers to go');
}
# raw clients: their key does not depend on the MariaDB capabilities the
# greeting offers, which a new worker learns from its first backend
my $rq = 'SELECT id, v FROM test.cache_t ORDER BY id';
my $r1 = raw($t->port(0));
my $before = raw_query($r1, $rq);
is(served(sub { raw_query($r1, $rq) }), 0, 'an entry before the reload');
# The counters `sluice -s stats` logs for a zone: its lookups line and
# its not-stored line, as one hash.
sub zone_stats { $t->cache_stats($_[0]) }
# a session with variables and another database, handed over by the
# reload: its filter state goes along, and it keeps its hits
my $hz = $t->dbh;
$hz->do("SET time_zone = '+03:00'");
$hz->do('USE cache_db2');
my $hzq = 'SELECT v FROM cache_t WHERE id = 1';
served(sub { $hz->selectrow_array($hzq) });
is(served(sub { $hz->selectrow_array($hzq) }), 0, 'a session with a SET '
   . 'and a USE: its entry');
my $st0 = zone_stats('qc');
ok(reload_all(), 'reload');
my $hzv;
is(served(sub { ($hzv) = $hz->selectrow_array($hzq) }), 0, 'handed over by '
   . 'the reload, it is still served from the cache (its variables and '
   . 'database came along)');
is($hzv, 'db2', 'from its own database\'s entry');
my $st1 = zone_stats('qc');
cmp_ok($st1->{lookups} // 0, '>=', $st0->{lookups} // 1, 'the counters '
       . 'go on across the reload');
my $r2 = raw($t->port(0));
undef $after;
is(served(sub { $after = raw_query($r2, $rq) }), 0,
   'a reload keeps the cache: a new worker serves the entry');
is(no_status($after), no_status($before), 'with the same bytes');
$t->write_file_expand('sluice.conf', conf('32m'));
ok(reload_all(), 'reload with another zone size');
is(served(sub { raw_query(raw($t->port(0)), $rq) }), 1,
   'a zone of another size starts empty');

# --- configuration errors ---------------------------------------------------

for my $case (
    [ "cache_zone z size=10k;", qr/invalid cache zone size/ ],
    [ "cache_zone z size=8m;\n    server { listen 127.0.0.1:%%PORT_9%%; "
      . "router readconn; upstream u; filters cache; cache nosuch; }",
      qr/unknown cache zone "nosuch"/ ],
    [ "server { listen 127.0.0.1:%%PORT_9%%; router readconn; upstream u; "
      . "filters cache; }", qr/needs a zone/ ],
    [ "cache_zone z size=8m;\n    server { listen 127.0.0.1:%%PORT_9%%; "
      . "router readconn; upstream u; filters cache; cache z;\n"
      . "cache_rule r match=text \"(\" no_cache; }", qr/bad regex at offset/ ],
    [ "cache_zone z size=8m;\n    cache_zone z size=8m;",
      qr/cache zone "z" is declared twice/ ],
    [ "cache_zone z 8m;", qr/needs size=SIZE/ ],
    [ "cache_zone z size=8m;\n    server { listen 127.0.0.1:%%PORT_9%%; "
      . "router readconn; upstream u; filters cache; cache z;\n"
      . "cache_ttl 1s; cache_soft_ttl 2s; }",
      qr/cache_soft_ttl is not less than cache_ttl/ ],
    [ "cache_zone z size=8m;\n    server { listen 127.0.0.1:%%PORT_9%%; "
      . "router readconn; upstream u; filters cache; cache z;\n"
      . "cache_max_entry_size 32m; }", qr/more than 16m - 1/ ],
    [ "cache_zone z size=8m;\n    server { listen 127.0.0.1:%%PORT_9%%; "
      . "router readconn; upstream u; filters cache; cache z;\n"
      . "cache z; }", qr/"cache" directive is duplicate|is duplicate/ ],
    [ "cache_zone z size=8m;\n    server { listen 127.0.0.1:%%PORT_9%%; "
      . "router readconn; upstream u; filters cache; cache z; }",
      qr/"filters cache": upstream "u" has no "monitor_user"/ ],
) {
    $t->write_file_expand('bad.conf', "mysql {\n    upstream u { server "
        . "%%PRIMARY%% role=primary; }\n    $case->[0]\n}\n");
    my ($rc, $out) = $t->test_config(conf => 'bad.conf');
    ok($rc != 0 && $out =~ /bad\.conf:\d+: / && $out =~ $case->[1],
       "bad config: $case->[1]") or diag($out);
}
