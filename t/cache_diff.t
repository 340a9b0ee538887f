#!/usr/bin/perl

# The query cache never gives a wrong answer: a differential test.  A
# seeded random script of statements over seven raw sessions (reads of a
# few small tables, a view over a join, a table whose triggers write
# another, `FROM (t1, t2)`; writes of every kind; SETs that change
# results; temporary tables shadowing real ones, made by text, by a binary
# COM_STMT_PREPARE, by PREPARE/EXECUTE and EXECUTE IMMEDIATE; transactions
# of every kind and isolation levels; USE, COM_INIT_DB,
# COM_RESET_CONNECTION, COM_CHANGE_USER between two users with other
# databases and character sets; FOUND_ROWS() and ROW_COUNT()) runs through
# a server block without the cache, every answer recorded, then, the
# schema made afresh identically, through one with the cache: every
# answer (the rows, NULL apart from '', the column count, an error's code,
# an OK's counts, the warning count, whether a transaction is open) must
# be the same.  Both under auth local and auth passthrough.  One driver
# runs the statements one at a time, so the server's answers do not
# depend on timing; at most one session is in a read-write transaction,
# and nobody else writes while it is open, so no statement waits for a
# lock.  The cache must have answered a fair share of the reads (its hit
# counter), or the comparison proves nothing.  A SELECT longer than
# buffer_size neither empties the cache nor turns it off for its session.
#
# Writes that bypass the proxy (issue 21): the seventh session is on the
# primary itself, and a share of the writes are its own (of the tables the
# reads read, the one whose triggers write another, multi-table ones; in
# ROW, STATEMENT or MIXED binlog format): the cache learns of them only
# from the primary's binlog (`binlog on`), some milliseconds after their
# commit.  What is promised is a bounded delay, so each is committed with
# an increment of a marker row, and before the next statement the driver
# waits, in both runs, until a read of the marker through the server
# block of the run (one the cache answered just before the write) sees
# the increment: the binlog reader applied the write's transaction, the
# entries of its tables are gone.  Within 10 s, or the test dies.  The
# marker's reads are not compared.
#
# A difference is shown with the seed, the step, the session and its
# state, both answers, whether the cache answered (the server's
# Com_select did not move), where the server last gave that answer and
# what ran since (the entry it came from, as far as one can tell), the
# session's history and the last statements of all.
# SLUICE_DIFF_SEED and SLUICE_DIFF_STEPS change the seed (1) and the
# number of statements of the script (8000); SLUICE_DIFF_SHOW how many
# differences per run are shown in full (5; the rest are counted).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::Wire qw(raw_session query change_user reset_connection
                    read_packet send_packet stmt_execute read_response);

my $t = Sluice::Test->new;
$t->has('cache', 'readconn');

my $SEED  = $ENV{SLUICE_DIFF_SEED}  // 1;
my $STEPS = $ENV{SLUICE_DIFF_STEPS} // 8000;
my $SHOW  = $ENV{SLUICE_DIFF_SHOW}  // 5;
for ([SLUICE_DIFF_SEED => $SEED], [SLUICE_DIFF_STEPS => $STEPS],
     [SLUICE_DIFF_SHOW => $SHOW])
{
    die "$_->[0] must be a number\n" unless $_->[1] =~ /^\d+\z/;
}

my $N = $t->name;
my ($DA, $DB) = ("${N}_a", "${N}_b");     # app's database, the other's
my ($OTHER, $OPW) = ("${N}_o", 'o-pw');
my ($MON, $MPW) = ("${N}_mon", 'mon-pw');
my ($BLU, $BPW) = ("${N}_bl_mon", 'bl-pw');       # the binlog reader's
my %PW = (app => 'secret', $OTHER => $OPW);
my $TIMEOUTS = 'SET SESSION innodb_lock_wait_timeout = 2, '
             . 'lock_wait_timeout = 2';

my $p = $t->primary_dbh;
$t->server_user($OTHER, $OPW);
# the monitor's account as the schema catalog needs it (SHOW VIEW and
# TRIGGER on *.*: it sees every view and trigger), of its own so that the
# sandbox's stays as it is
$p->do("CREATE OR REPLACE USER '$MON'\@'%' IDENTIFIED BY '$MPW'");
$p->do("GRANT REPLICATION CLIENT, PROCESS, SLAVE MONITOR, SHOW VIEW, "
       . "TRIGGER ON *.* TO '$MON'\@'%'");
# the binlog reader's account
Sluice::Test::binlog_account($p, $BLU, $BPW);

my @OPEN;           # raw sessions of the running script
my $OWNER = $$;
sub cleanup {
    close $_->{sock} for grep { $_ } @OPEN;
    @OPEN = ();
    my $r = $t->primary_dbh;
    $r->do('SET SESSION lock_wait_timeout = 10');
    $r->do("DROP DATABASE IF EXISTS $_") for $DA, $DB;
    $r->do("DROP USER IF EXISTS '$_'\@'%'") for $OTHER, $MON, $BLU;
}
END { eval { cleanup() } if $$ == $OWNER }

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
events { worker_connections 200; }
mysql {
    buffer_size 16k;
    user app { password "secret"; }
    user $OTHER { password "$OPW"; }
    cache_zone qc size=16m;
    cache_zone qcp size=16m;
    upstream cluster {
        server %%PRIMARY%% role=primary;
        monitor_user $MON;
        monitor_password "$MPW";
        binlog on;
        binlog_user $BLU;
        binlog_password "$BPW";
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache qc;
        cache_ttl 60s;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        upstream cluster;
        auth passthrough;
        filters cache;
        cache qcp;
        cache_ttl 60s;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        upstream cluster;
        auth passthrough;
    }
}
EOF
$t->run;
$t->plan(11);
ok(wait_for(sub { $t->grep_log(qr/binlog "cluster": live/) },
            what => 'the binlog reader to be live'),
   'the binlog reader is live');


# --- the schema ----------------------------------------------------------

# Made through a server block with the cache, as an application would:
# the proxy sees the DDL (the cache forgets what it held, a catalog of the
# schema knows to look again).  Non-ASCII data as UTF-8 bytes.
sub schema {
    my ($port) = @_;
    my @sql = (
        "DROP DATABASE IF EXISTS $DA", "DROP DATABASE IF EXISTS $DB",
        "CREATE DATABASE $DA CHARACTER SET utf8mb4",
        "CREATE DATABASE $DB CHARACTER SET utf8mb4");
    for my $d ($DA, $DB) {
        push @sql,
            "CREATE TABLE $d.t1 (id INT PRIMARY KEY AUTO_INCREMENT, "
                . 'v VARCHAR(32), n INT NULL) ENGINE=InnoDB',
            "CREATE TABLE $d.t2 (id INT PRIMARY KEY AUTO_INCREMENT, "
                . 't1_id INT NOT NULL, x INT NOT NULL, KEY (t1_id)) '
                . 'ENGINE=InnoDB';
    }
    push @sql,
        "CREATE TABLE $DA.t3 (id INT PRIMARY KEY, w VARCHAR(16)) "
            . 'ENGINE=InnoDB',
        "CREATE TABLE $DA.tt (id INT PRIMARY KEY AUTO_INCREMENT, "
            . 't1_id INT NOT NULL, amount INT NOT NULL) ENGINE=InnoDB',
        "CREATE TABLE $DA.tl (t1_id INT PRIMARY KEY, total INT NOT NULL, "
            . 'cnt INT NOT NULL) ENGINE=InnoDB',
        "CREATE TABLE $DA.mk (id INT PRIMARY KEY, n INT NOT NULL) "
            . 'ENGINE=InnoDB',
        "CREATE TRIGGER $DA.tt_ai AFTER INSERT ON $DA.tt FOR EACH ROW "
            . "INSERT INTO $DA.tl (t1_id, total, cnt) VALUES (NEW.t1_id, "
            . 'NEW.amount, 1) ON DUPLICATE KEY UPDATE total = total + '
            . 'NEW.amount, cnt = cnt + 1',
        "CREATE TRIGGER $DA.tt_au AFTER UPDATE ON $DA.tt FOR EACH ROW "
            . "UPDATE $DA.tl SET total = total - OLD.amount + NEW.amount "
            . 'WHERE t1_id = NEW.t1_id',
        "CREATE TRIGGER $DA.tt_ad AFTER DELETE ON $DA.tt FOR EACH ROW "
            . "UPDATE $DA.tl SET total = total - OLD.amount, cnt = cnt - 1 "
            . 'WHERE t1_id = OLD.t1_id',
        "CREATE VIEW $DA.v AS SELECT t1.id, t1.v, t2.x FROM $DA.t1 "
            . "JOIN $DA.t2 ON t2.t1_id = t1.id",
        "INSERT INTO $DA.t1 VALUES (1, 'alpha', 10), (2, 'caf\xc3\xa9', 20), "
            . "(3, 'na\xc3\xafve', NULL), (4, 'Stra\xc3\x9fe', 40), "
            . "(5, '', 50), (6, NULL, 60), (7, '\xe2\x82\xacuro', 70)",
        "INSERT INTO $DA.t2 VALUES (1, 1, 100), (2, 1, 101), (3, 2, 200), "
            . '(4, 3, 300), (5, 4, 400), (6, 4, 401), (7, 6, 600), '
            . '(8, 7, 700)',
        "INSERT INTO $DA.t3 VALUES (1, 'secret'), (2, 'hidden')",
        "INSERT INTO $DA.mk VALUES (1, 0)",
        "INSERT INTO $DA.tt (t1_id, amount) VALUES (1, 5), (2, 7), (1, 3), "
            . '(4, 2)',
        "INSERT INTO $DB.t1 VALUES (1, 'b-one', 11), (2, 'b\xc3\xa9', 22), "
            . "(3, 'b-three', NULL)",
        "INSERT INTO $DB.t2 VALUES (1, 1, 1000), (2, 2, 2000), "
            . '(3, 2, 2001)';
    my $rs = raw_session($port) or die "no session to port $port\n";
    for my $q (@sql) {
        my $r = query($rs->{sock}, $q);
        die "$q: " . answer($r) . "\n" unless $r && $r->{ok};
    }
    close $rs->{sock};
}

schema($t->port(0));
$p->do("GRANT SELECT ON $DB.* TO '$OTHER'\@'%'");
$p->do("GRANT SELECT ON $DA.$_ TO '$OTHER'\@'%'") for qw(t1 v);


# --- the script ----------------------------------------------------------

# xorshift32: the same script from the same seed on any perl
my $RNG;
sub rng_seed {
    $RNG = ($_[0] * 2654435761 + 0x5bd1e995) & 0xffffffff || 1;
    rnd(2) for 1 .. 8;
}
sub rnd {
    my ($n) = @_;
    my $x = $RNG;
    $x ^= ($x << 13) & 0xffffffff;
    $x ^= $x >> 17;
    $x ^= ($x << 5) & 0xffffffff;
    $RNG = $x;
    return $x % $n;
}
sub chance { rnd(1000) < $_[0] * 1000 }
sub pick { $_[ rnd(scalar @_) ] }
# pick([weight, item], ...)
sub wpick {
    my $sum = 0;
    $sum += $_->[0] for @_;
    my $r = rnd($sum);
    for (@_) {
        return $_->[1] if $r < $_->[0];
        $r -= $_->[0];
    }
    return $_[-1][1];
}

# The sessions as they log in: five of app in its database (one of them
# with latin1), one of the other user in its own.
my @LOGIN = (
    (map { { user => 'app', db => $DA, cs => 45 } } 1 .. 4),
    { user => 'app', db => $DA, cs => 8 },
    { user => $OTHER, db => $DB, cs => 45 },
);
# The seventh, session $D, is app's on the primary itself: the proxy never
# sees its writes, only the binlog tells the cache of them.  Session $D + 1
# (not in the script) reads the marker through the proxy.
my $D = @LOGIN;
my $DIRECT = { user => 'app', db => $DA, cs => 45 };

# Reads: [weight, sub returning (SQL, tables)].  Tables without a dot are
# the session's database's; A. and B. name the two databases; a view is
# its base tables.
my @VTAB = qw(v t1 t2);
my @READS = (
    [6, sub { my $k = 1 + rnd(9);
              ("SELECT id, v, n FROM t1 WHERE id = $k", 't1') }],
    [3, sub { my $k = 1 + rnd(7);
              ("SELECT id, v FROM t1 WHERE id BETWEEN $k AND "
               . ($k + 2) . ' ORDER BY id', 't1') }],
    [3, sub { ('SELECT id, v, n FROM t1 ORDER BY id', 't1') }],
    [2, sub { ('SELECT COUNT(*), SUM(n) FROM t1', 't1') }],
    [3, sub { my $k = 2 + rnd(6);
              ('SELECT t1.id, t1.v, t2.x FROM t1 JOIN t2 ON t2.t1_id = '
               . "t1.id WHERE t1.id <= $k ORDER BY t2.id", 't1', 't2') }],
    [5, sub { ('SELECT t1.id, t2.x FROM (t1, t2) WHERE t2.t1_id = t1.id '
               . 'ORDER BY t2.id', 't1', 't2') }],
    [4, sub { my $k = 1 + rnd(7);
              ('SELECT COUNT(*), SUM(t2.x) FROM (t1, t2) WHERE t2.t1_id = '
               . "t1.id AND t1.id = $k", 't1', 't2') }],
    [3, sub { my $k = 2 + rnd(6);
              ('SELECT t2.id, t1.v FROM (t2, t1) WHERE t1.id = t2.t1_id '
               . "AND t1.id <= $k ORDER BY t2.id", 't1', 't2') }],
    [4, sub { ('SELECT id, v, x FROM v ORDER BY id, x', @VTAB) }],
    [3, sub { my $k = 1 + rnd(7);
              ("SELECT COUNT(*), SUM(x) FROM v WHERE id = $k", @VTAB) }],
    [5, sub { ('SELECT t1_id, total, cnt FROM tl ORDER BY t1_id', 'tl') }],
    [3, sub { my $k = 1 + rnd(5);
              ("SELECT total, cnt FROM tl WHERE t1_id = $k", 'tl') }],
    [2, sub { ('SELECT id, t1_id, amount FROM tt ORDER BY id', 'tt') }],
    [3, sub { my $k = 1 + rnd(7);
              ("SELECT id, x FROM t2 WHERE t1_id = $k ORDER BY id", 't2') }],
    [1, sub { ('SELECT id, w FROM t3 ORDER BY id', 't3') }],
    [1, sub { my $k = 4 + rnd(6);
              ("SELECT id, v, n FROM \"t1\" WHERE id <= $k ORDER BY id",
               't1') }],
    [1, sub { ('SELECT COUNT(*), SUM(n) FROM "t1"', 't1') }],
    [1, sub { ('SELECT "t1".id, "t2".x FROM "t1" JOIN "t2" ON '
               . '"t2".t1_id = "t1".id ORDER BY "t2".id', 't1', 't2') }],
    [3, sub { my $k = 1 + rnd(3);
              ("SELECT SQL_CALC_FOUND_ROWS id, v FROM t1 ORDER BY id "
               . "LIMIT $k", 't1') }],
    [2, sub { ("SELECT id, v FROM $DA.t1 ORDER BY id", 'A.t1') }],
    [2, sub { ("SELECT id, x FROM $DA.t2 ORDER BY id", 'A.t2') }],
    [2, sub { ("SELECT id, v, n FROM $DB.t1 ORDER BY id", 'B.t1') }],
    [2, sub { my $k = 1 + rnd(7);
              ("SELECT id, HEX(v), CHAR_LENGTH(v) FROM t1 WHERE id = $k",
               't1') }],
    [2, sub { ("SELECT id, n FROM t1 WHERE v = 'caf\xc3\xa9'", 't1') }],
    [2, sub { ('SELECT id, v FROM t1 ORDER BY id LIMIT 2', 't1') }],
);
# Reads in ANSI_QUOTES and of the tables a temporary one may shadow.
rng_seed(0);
my @ANSI_READS = reads_where(sub { $_[0] =~ /"t1"/ });
my %SHADOW_READS = map { my $t = $_;
    $t => [grep { my ($q, @d) = $_->[1]->();
                  $q !~ /"|\.t\d/ && !grep { /^(?:v|t[l3t])$/ } @d
                  and grep { $_ eq $t } @d } @READS] } qw(t1 t2);

# Writes: [weight, sub returning (SQL, tables it changes)].
my @VALS = ('alpha', "caf\xc3\xa9", "\xc3\x9cn\xc3\xafc\xc3\xb8d\xc3\xa9",
            'x', "\xe2\x82\xac");
my @WRITES = (
    [5, sub { my $k = 1 + rnd(9);
              ("UPDATE t1 SET n = COALESCE(n, 0) + 1 WHERE id = $k", 't1') }],
    [3, sub { my $k = 1 + rnd(9); my $v = pick(@VALS);
              ("UPDATE t1 SET v = '$v' WHERE id = $k", 't1') }],
    [3, sub { my $v = pick(@VALS); my $k = rnd(100);
              ("INSERT INTO t1 (v, n) VALUES ('$v', $k)", 't1') }],
    [2, sub { my $k = 6 + rnd(8);
              ("DELETE FROM t1 WHERE id = $k", 't1') }],
    [2, sub { my $k = 1 + rnd(10); my $v = pick(@VALS); my $j = rnd(100);
              ("REPLACE INTO t1 (id, v, n) VALUES ($k, '$v', $j)", 't1') }],
    [3, sub { my $k = 1 + rnd(8); my $j = rnd(1000);
              ("INSERT INTO t2 (t1_id, x) VALUES ($k, $j)", 't2') }],
    [3, sub { my $k = 1 + rnd(8);
              ("UPDATE t2 SET x = x + 1 WHERE t1_id = $k", 't2') }],
    [2, sub { my $k = 1 + rnd(12); my $j = 1 + rnd(8); my $m = rnd(1000);
              ("REPLACE INTO t2 (id, t1_id, x) VALUES ($k, $j, $m)",
               't2') }],
    [2, sub { my $k = 1 + rnd(14); ("DELETE FROM t2 WHERE id = $k", 't2') }],
    [5, sub { my $k = 1 + rnd(8);
              ('UPDATE (t1, t2) SET t2.x = t2.x + 10 WHERE t2.t1_id = '
               . "t1.id AND t1.id = $k", 't2') }],
    [2, sub { my $k = 1 + rnd(8);
              ('UPDATE (t1, t2) SET t1.n = COALESCE(t1.n, 0) + 1, '
               . 't2.x = t2.x - 1 WHERE t2.t1_id = t1.id AND t1.id = '
               . $k, 't1', 't2') }],
    [4, sub { my $k = 1 + rnd(8); my $j = 100 * rnd(8);
              ('DELETE t2 FROM (t1, t2) WHERE t2.t1_id = t1.id AND '
               . "t1.id = $k AND t2.x > $j", 't2') }],
    [5, sub { my $k = 1 + rnd(6); my $j = 1 + rnd(20);
              ("INSERT INTO tt (t1_id, amount) VALUES ($k, $j)",
               'tt', 'tl') }],
    [2, sub { my $k = 1 + rnd(6);
              ("UPDATE tt SET amount = amount + 1 WHERE t1_id = $k",
               'tt', 'tl') }],
    [2, sub { my $k = 1 + rnd(12);
              ("DELETE FROM tt WHERE id = $k", 'tt', 'tl') }],
    [1, sub { my $k = 1 + rnd(2); my $v = pick('secret', 'open', 'x');
              ("UPDATE t3 SET w = '$v' WHERE id = $k", 't3') }],
    [2, sub { my $k = 1 + rnd(3);
              ("UPDATE $DB.t1 SET n = COALESCE(n, 0) + 1 WHERE id = $k",
               'B.t1') }],
    [2, sub { my $k = 1 + rnd(8);
              ("UPDATE $DA.t2 SET x = x + 1 WHERE id = $k", 'A.t2') }],
);

my @SETS = (
    [3, 'SET sql_select_limit = 1'], [3, 'SET sql_select_limit = 2'],
    [2, 'SET sql_select_limit = 3'], [2, 'SET sql_select_limit = DEFAULT'],
    [3, "SET sql_mode = 'ANSI_QUOTES'"],
    [2, "SET sql_mode = 'STRICT_TRANS_TABLES,ANSI_QUOTES'"],
    [2, 'SET sql_mode = DEFAULT'],
    [3, 'SET NAMES latin1'], [3, 'SET NAMES utf8mb4'],
    [2, 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'],
    [1, 'SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED'],
    [1, 'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ'],
    [1, 'SET @x = 1'],
);

# Settings and reads whose answers they change.
sub reads_where {
    my ($want) = @_;
    return grep { my ($q) = $_->[1]->(); $want->($q) } @READS;
}
my @FLIPS = (
    [[map { "SET sql_select_limit = $_" } 1, 2, 3, 'DEFAULT'],
     [reads_where(sub { $_[0] !~ /WHERE id = |COUNT|"/ })]],
    [['SET NAMES latin1', 'SET NAMES utf8mb4'],
     [reads_where(sub { $_[0] =~ /^SELECT (?:t1\.)?id, (?:t1\.)?v\b/
                        && $_[0] !~ /"/ })]],
    [["SET sql_mode = 'ANSI_QUOTES'", 'SET sql_mode = DEFAULT'],
     \@ANSI_READS],
);

my $TEMP_T1 = 'CREATE TEMPORARY TABLE t1 (id INT PRIMARY KEY, v VARCHAR(32), '
    . 'n INT NULL) SELECT seq AS id, seq * 11 AS v, seq * 1000 AS n '
    . 'FROM seq_1_to_4';
my $TEMP_T2 = 'CREATE TEMPORARY TABLE t2 (id INT PRIMARY KEY AUTO_INCREMENT, '
    . 't1_id INT NOT NULL, x INT NOT NULL) SELECT seq AS id, seq AS t1_id, '
    . 'seq * 7 AS x FROM seq_1_to_3';
my %TEMP = (t1 => $TEMP_T1, t2 => $TEMP_T2);

my $LONG = 'SELECT id, v FROM t1 WHERE id NOT IN ('
    . join(', ', 100000 .. 103000) . ') ORDER BY id';

# The script: [{ s => session, op => sql|bin|reset|change|init_db|mark|
# sync, sql => ..., read => 1 if it may be answered from the cache, n =>
# the marker's value (mark, sync), ... }].
sub generate {
    my ($seed, $steps) = @_;
    rng_seed($seed);
    my @g = map { { user => $_->{user}, db => $_->{db}, cs => $_->{cs},
                    ansi => 0, trx => '', temp => {}, pool => [],
                    sets => [] } } @LOGIN, $DIRECT;
    $g[$D]{fmt} = 'ROW';
    my ($rw, $dirty) = (undef, {});     # the read-write transaction
    my $marks = 0;                      # the direct writes so far
    my (@script, @pool, @touched);
    my $K = @LOGIN;

    my $state = sub {
        my $g = $g[$_[0]];
        return join ' ', "$g->{user}\@$g->{db}", "cs=$g->{cs}",
            ($g->{trx} ? "trx=$g->{trx}" : ()),
            ($g->{ansi} ? 'ansi_quotes' : ()),
            ($g->{fmt} ? "direct binlog_format=$g->{fmt}" : ()),
            (%{ $g->{temp} } ? 'temp=' . join(',', sort keys %{ $g->{temp} })
                             : ());
    };
    my $emit = sub {
        my ($i, %st) = @_;
        push @script, { s => $i, state => $state->($i), op => 'sql', %st };
    };
    my $resolve = sub {
        my ($i, @tabs) = @_;
        return map { /^A\.(.*)/ ? "$DA.$1" : /^B\.(.*)/ ? "$DB.$1"
                                           : "$g[$i]{db}.$_" } @tabs;
    };
    my $forget = sub {                  # reset, change user: trx ends
        my ($i) = @_;
        if (defined $rw && $rw == $i) {
            ($rw, $dirty) = (undef, {});
        }
        @{ $g[$i] }{qw(trx ansi)} = ('', 0);
        $g[$i]{temp} = {};
        $g[$i]{sets} = [];
    };
    # what the session's answers depend on, as far as the script knows:
    # sessions alike may share the cache's entries
    my $sig = sub {
        my ($i, $temp) = @_;
        my $g = $g[$i];
        return join "\0", @$g{qw(user db cs)}, @{ $g->{sets} },
            $temp && %{ $g->{temp} } ? 'temp' : '';
    };
    # another session like $i (but for its temporary tables, with temp =>
    # 0): one there is, or one made so (COM_CHANGE_USER to its user,
    # database and character set, then its SETs; always with fresh => 1),
    # or any
    my $alike = sub {
        my ($i, %o) = @_;
        my $t = $o{temp} // 1;
        my @j = grep { $_ != $i && $sig->($_, $t) eq $sig->($i, $t) }
                0 .. $K - 1;
        return pick(@j) if @j && chance(0.8) && !$o{fresh};
        return rnd($K) unless chance(0.5) || $o{fresh};
        my $j = pick(grep { $_ != $i } 0 .. $K - 1);
        my ($user, $db, $cs) = @{ $g[$i] }{qw(user db cs)};
        $emit->($j, op => 'change', user => $user, db => $db, cs => $cs);
        $forget->($j);
        @{ $g[$j] }{qw(user db cs ansi)} = ($user, $db, $cs, $g[$i]{ansi});
        $emit->($j, sql => $TIMEOUTS);
        for my $set (@{ $g[$i]{sets} }) {
            $emit->($j, sql => $set);
            push @{ $g[$j]{sets} }, $set;
        }
        return $j;
    };
    my $may_write = sub {
        my ($i) = @_;
        return (!defined $rw || $rw == $i) && $g[$i]{trx} !~ /^(?:ro|snap)/;
    };
    # a session that may write now, most often one that can write in
    # database $db
    my $writer = sub {
        my ($db) = @_;
        return $rw if defined $rw;
        my @w = grep { $may_write->($_) } 0 .. $K - 1;
        my @able = grep { $g[$_]{user} eq 'app'
                          && (!defined $db || $g[$_]{db} eq $db) } @w;
        return @able && chance(0.8) ? pick(@able) : @w ? pick(@w) : undef;
    };

    my $read_of = sub {
        my ($i, %o) = @_;
        my $g = $g[$i];
        my ($q, @d);
        my $shadow = $o{of} // (%{ $g->{temp} } && chance(0.4)
                                ? pick(sort keys %{ $g->{temp} }) : undef);
        if ($g->{ansi} && chance(0.5)) {
            ($q, @d) = wpick(@ANSI_READS)->();
        } elsif (defined $shadow) {
            # a read of the table a temporary one shadows, most often one
            # that was read before
            for my $from ($g->{pool}, \@pool) {
                my @c = grep { my @d = @{ $_->[1] };
                               $_->[0] !~ /\.t\d|"/ && !grep { !/^t[12]$/ } @d
                               and grep { $_ eq $shadow } @d } @$from;
                return @{ pick(@c) } if @c && chance(0.7);
            }
            ($q, @d) = wpick(@{ $SHADOW_READS{$shadow} })->();
        } elsif ($o{want}) {
            # a read of what the open transaction wrote, this session's
            # if it had one
            for my $from ($g->{pool}, \@pool) {
                my @c = grep { my $r = $_; grep { $o{want}{$_} }
                               $resolve->($i, @{ $r->[1] }) } @$from;
                return @{ pick(@c) } if @c;
            }
        }
        # again: one of this session's last reads, or anyone's
        my $own = $g->{pool};
        if (!defined $q && @$own && $o{own}) {
            return @{ $own->[ -1 - rnd(@$own < 3 ? scalar @$own : 3) ] };
        }
        if (!defined $q && @$own && chance(0.35)) {
            return @{ $own->[ -1 - rnd(scalar @$own) ] };
        }
        if (!defined $q && @pool && chance(0.45)) {
            return @{ $pool[ -1 - rnd(@pool < 40 ? scalar @pool : 40) ] };
        }
        ($q, @d) = wpick(@READS)->() unless defined $q;
        push @pool, [$q, \@d];
        push @$own, [$q, \@d];
        shift @$own if @$own > 12;
        return ($q, \@d);
    };
    my $read = sub {
        my ($i, %o) = @_;
        my ($q, $d) = $read_of->($i, %o);
        $emit->($i, sql => $q, read => 1);
        push @touched, $resolve->($i, @$d);
        splice @touched, 0, @touched - 12 if @touched > 12;
        my $follow = $q =~ /SQL_CALC/ ? 0.5 : 0.12;
        $emit->($i, sql => pick('SELECT FOUND_ROWS()', 'SELECT ROW_COUNT()'),
                read => 1) if chance($follow);
        return ($q, $d);
    };
    my $write = sub {
        my ($i, %o) = @_;
        my ($q, @m);
        # a write of one of those tables (when there are several, the
        # others stay as they were)
        my $target = $o{tables} ? pick(@{ $o{tables} }) : undef;
        for (1 .. ($target ? 16 : 1)) {
            ($q, @m) = wpick(@WRITES)->();
            last if !$target || grep { $_ eq $target } $resolve->($i, @m);
        }
        $emit->($i, sql => $q);
        if (defined $rw && $rw == $i) {
            $dirty->{$_} = 1 for $resolve->($i, @m);
        }
    };
    # A write on the primary itself, in ROW, STATEMENT or MIXED format,
    # committed with the marker's increment: the marker read is a hit
    # before it, and the driver waits until it sees the increment (the
    # binlog reader applied the write) before the next statement.
    my $direct = sub {
        my (%o) = @_;
        if (chance(0.3)) {
            my $f = wpick([2, 'ROW'], [2, 'STATEMENT'], [1, 'MIXED']);
            $emit->($D, sql => "SET SESSION binlog_format = '$f'");
            $g[$D]{fmt} = $f;
        }
        $emit->($D, op => 'mark', n => $marks);
        $emit->($D, sql => 'BEGIN');
        $write->($D, %o);
        $emit->($D, sql => 'UPDATE mk SET n = n + 1');
        $emit->($D, sql => 'COMMIT');
        $emit->($D, op => 'sync', n => ++$marks);
    };

    my %move = (
        read => sub {
            # a session in a transaction reads more
            my @in = grep { $g[$_]{trx} } 0 .. $K - 1;
            my $i = @in && chance(0.35) ? pick(@in) : rnd($K);
            $read->($i);
        },
        write => sub {
            my $i = $writer->(pick($DA, $DA, $DB)) // return;
            $write->($i, tables => chance(0.5) && @touched ? [@touched]
                                                            : undef);
            # then a read that may be a hit, and what the server says of
            # the last statement
            if (chance(0.3)) {
                $read->($i);
                $emit->($i, sql => 'SELECT ROW_COUNT()', read => 1);
            }
        },
        # a read, a write of its tables elsewhere, the read again here and
        # in another session
        reread => sub {
            my $i = rnd($K);
            my ($q, $d) = $read->($i);
            my $w = $writer->($g[$i]{db}) // return;
            $write->($w, tables => [$resolve->($i, @$d)]);
            $emit->($i, sql => $q, read => 1);
            $emit->($alike->($i), sql => $q, read => 1);
        },
        # the same with a write that bypasses the proxy (never while a
        # session of the proxy is in a read-write transaction)
        direct => sub {
            return if defined $rw;
            my $i = rnd($K);
            my ($q, $d) = $read->($i);
            $direct->(tables => [$resolve->($i, @$d)]);
            $emit->($i, sql => $q, read => 1);
            $emit->($alike->($i), sql => $q, read => 1);
        },
        set => sub {
            my $i = rnd($K);
            my $g = $g[$i];
            # often a value the session had before another one: then one
            # of its last reads again
            my $var = sub { $_[0] =~ /^SET (NAMES|SESSION TRANSACTION|\S+)/;
                            $1 };
            my %cur = map { $var->($_) => $_ } @{ $g->{sets} };
            my %seen;
            my @back = grep { !$seen{$_}++ && $cur{ $var->($_) } ne $_ }
                       @{ $g->{sets} };
            my $q = @back && chance(0.5) ? pick(@back) : wpick(@SETS);
            $g->{ansi} = $q =~ /ANSI/ ? 1 : 0 if $q =~ /sql_mode/;
            $emit->($i, sql => $q);
            push @{ $g->{sets} }, $q unless $q =~ /^SET @/;
            if (@back && grep { $_ eq $q } @back) {
                $read->($i, own => 1);
            } elsif (chance(0.5)) {
                $read->($i);
            }
        },
        # a setting back and forth, the same read under each value
        flip => sub {
            my $i = rnd($K);
            my $g = $g[$i];
            my ($vals, $reads) = @{ pick(@FLIPS) };
            my ($a, $b) = (pick(@$vals), pick(@$vals));
            return if $a eq $b;
            my ($q) = wpick(@$reads)->();
            for my $set ($a, $b, $a) {
                $emit->($i, sql => $set);
                push @{ $g->{sets} }, $set;
                $g->{ansi} = $set =~ /ANSI/ ? 1 : 0 if $set =~ /sql_mode/;
                $emit->($i, sql => $q, read => 1);
            }
        },
        # a write not committed yet, and a read that sees it: after the
        # same read as usual, or before it elsewhere
        dirty => sub {
            if (!defined $rw) {
                my $w = $writer->(pick($DA, $DA, $DB)) // return;
                $emit->($w, sql => pick('BEGIN', 'START TRANSACTION'));
                $g[$w]{trx} = 'rw';
                $rw = $w;
            }
            $write->($rw, tables => @touched ? [@touched] : undef)
                unless %$dirty;
            my @c = grep { !$g[$_]{trx} } 0 .. $K - 1;
            return unless @c;
            my $i = pick(@c);
            my $ru = 'SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED';
            if (chance(0.5)) {
                my ($q) = $read->($i, want => $dirty);
                $emit->($i, sql => $ru);
                $emit->($i, sql => $q, read => 1);
            } else {
                $emit->($i, sql => $ru);
                my ($q) = $read->($i, want => $dirty);
                $emit->($alike->($i), sql => $q, read => 1);
            }
        },
        trx => sub {
            my $i = rnd($K);
            my $g = $g[$i];
            if ($g->{trx}) {
                $emit->($i, sql => pick('COMMIT', 'ROLLBACK'));
                ($rw, $dirty) = (undef, {}) if defined $rw && $rw == $i;
                $g->{trx} = '';
                return;
            }
            my @k = ([3, 'ro'], [3, 'snap']);
            push @k, [4, 'rw'] unless defined $rw;
            my $k = wpick(@k);
            my $q = $k eq 'ro' ? 'START TRANSACTION READ ONLY'
                : $k eq 'snap' ? pick('START TRANSACTION READ ONLY, WITH '
                                      . 'CONSISTENT SNAPSHOT',
                                      'START TRANSACTION WITH CONSISTENT '
                                      . 'SNAPSHOT, READ ONLY')
                : pick('BEGIN', 'START TRANSACTION',
                       'START TRANSACTION READ WRITE',
                       'START TRANSACTION WITH CONSISTENT SNAPSHOT');
            $emit->($i, sql => $q);
            $g->{trx} = $k;
            $rw = $i if $k eq 'rw';
            $read->($i);
        },
        temp => sub {
            my $i = rnd($K);
            my $g = $g[$i];
            my $name = pick('t1', 't1', 't2');
            if ($g->{temp}{$name}) {
                $emit->($i, sql => "DROP TEMPORARY TABLE $name");
                delete $g->{temp}{$name};
                $read->($i, of => $name);
                return;
            }
            # often in a fresh session (the cache may still know nothing
            # of what came before that it should not: its other
            # temporary tables, statements whose effects it cannot see)
            if (chance(0.5)) {
                $emit->($i, op => 'reset');
                $forget->($i);
                $emit->($i, sql => $TIMEOUTS);
            }
            my $how = wpick([3, 'text'], [4, 'bin'], [1, 'prepare'],
                            [1, 'immediate']);
            if ($how eq 'text') {
                $emit->($i, sql => $TEMP{$name});
            } elsif ($how eq 'bin') {
                $emit->($i, op => 'bin', sql => $TEMP{$name});
            } elsif ($how eq 'prepare') {
                $emit->($i, sql => "PREPARE ${N}_st FROM '$TEMP{$name}'");
                $emit->($i, sql => "EXECUTE ${N}_st");
                $emit->($i, sql => "DEALLOCATE PREPARE ${N}_st");
            } else {
                $emit->($i, sql => "EXECUTE IMMEDIATE '$TEMP{$name}'");
            }
            # (the other user may not; nor may a read-only transaction)
            $g->{temp}{$name} = 1
                if $g->{user} eq 'app' && $g->{trx} !~ /^(?:ro|snap)/;
            # (and in a session like this one but without it)
            my $j;
            for (1 .. 1 + rnd(3)) {
                my ($q) = $read->($i, of => $name);
                $j //= $alike->($i, temp => 0, fresh => 1) if chance(0.6);
                $emit->($j, sql => $q, read => 1) if defined $j;
            }
        },
        use => sub {
            my $i = rnd($K);
            my $db = $g[$i]{db} eq $DA ? $DB : $DA;
            if (chance(0.7)) {
                $emit->($i, sql => "USE $db");
            } else {
                $emit->($i, op => 'init_db', db => $db);
            }
            $g[$i]{db} = $db;
            $read->($i);
        },
        reset => sub {
            my $i = rnd($K);
            $emit->($i, op => 'reset');
            $forget->($i);
            $emit->($i, sql => $TIMEOUTS);
            $read->($i);
        },
        change => sub {
            my $i = rnd($K);
            my $g = $g[$i];
            # to the other user and its database, or back; or to app again
            # with another database or character set
            my ($user, $db, $cs) =
                $g->{user} eq 'app' && chance(0.5)
                    ? ($OTHER, $DB, pick(8, 45))
                    : ('app', pick($DA, $DA, $DB), pick(45, 45, 8));
            $emit->($i, op => 'change', user => $user, db => $db, cs => $cs);
            $forget->($i);
            @$g{qw(user db cs)} = ($user, $db, $cs);
            $emit->($i, sql => $TIMEOUTS);
            $read->($i) for 1 .. 1 + rnd(2);
        },
        long => sub {
            my $i = rnd($K);
            $emit->($i, sql => $LONG, read => 1);
        },
    );
    my @moves = ([80, 'read'], [20, 'write'], [24, 'reread'], [14, 'set'],
                 [6, 'flip'], [6, 'dirty'], [12, 'trx'], [6, 'temp'],
                 [6, 'use'], [8, 'reset'], [8, 'change'], [1, 'long'],
                 [9, 'direct']);

    $emit->($_, sql => $TIMEOUTS) for 0 .. $D;
    while (@script < $steps) {
        $move{ wpick(@moves) }->();
        # the read-write transaction holds every other writer: short
        if (defined $rw && chance(0.1)) {
            $emit->($rw, sql => pick('COMMIT', 'ROLLBACK'));
            $g[$rw]{trx} = '';
            ($rw, $dirty) = (undef, {});
        }
    }
    splice @script, $steps;
    return \@script;
}


# --- running it ----------------------------------------------------------

sub quote {
    my ($v) = @_;
    return 'NULL' unless defined $v;
    $v =~ s/([^\x20-\x7e]|['\\])/sprintf '\\x%02x', ord $1/ge;
    return "'$v'";
}

# An answer as a line: what is compared, and shown.
sub answer {
    my ($r) = @_;
    return 'no answer (the connection broke)' unless $r;
    return $r->{lost} if $r->{lost};
    if ($r->{err}) {
        return "ERR $r->{err}{code}"
            . (@{ $r->{rows} // [] } ? ' after ' . @{ $r->{rows} } . ' rows'
                                     : '');
    }
    my $trx = sub { ($_[0] // 0) & 1 ? ', in a transaction' : '' };
    if ($r->{ok}) {
        my $o = $r->{ok};
        return "OK $o->{affected} rows"
            . ($o->{insert_id} ? ", insert id $o->{insert_id}" : '')
            . ($o->{warnings} ? ", $o->{warnings} warnings" : '')
            . $trx->($o->{status});
    }
    return "$r->{cols} columns, " . @{ $r->{rows} } . ' rows:'
        . join('', map { ' (' . join(', ', map { quote($_) } @$_) . ')' }
               @{ $r->{rows} })
        . ($r->{warnings} ? ", $r->{warnings} warnings" : '')
        . $trx->($r->{status});
}

sub short {
    my ($s) = @_;
    return length $s > 160 ? substr($s, 0, 157) . '...' : $s;
}

sub describe {
    my ($st) = @_;
    return "(the marker read: n = $st->{n}, from the cache if any)"
        if $st->{op} eq 'mark';
    return "(the binlog reader applied it: the marker read sees n = "
        . "$st->{n})" if $st->{op} eq 'sync';
    return 'COM_RESET_CONNECTION' if $st->{op} eq 'reset';
    return "COM_CHANGE_USER $st->{user} db $st->{db} charset $st->{cs}"
        if $st->{op} eq 'change';
    return "COM_INIT_DB $st->{db}" if $st->{op} eq 'init_db';
    my $q = length $st->{sql} > 200
        ? substr($st->{sql}, 0, 60) . '... (' . length($st->{sql})
          . ' bytes)' : $st->{sql};
    $q =~ s/([^\x20-\x7e])/sprintf '\\x%02x', ord $1/ge;
    return $st->{op} eq 'bin' ? "COM_STMT_PREPARE+EXECUTE $q" : $q;
}

sub err_of {
    my ($pl) = @_;
    my ($code, $state, $msg) = unpack 'x v x a5 a*', $pl;
    return { err => { code => $code, state => $state, msg => $msg } };
}

# A statement by the binary protocol: COM_STMT_PREPARE, its EXECUTE, and
# COM_STMT_CLOSE.  The EXECUTE's answer (an OK or an ERR: a CREATE).
sub binary_do {
    my ($s, $sql) = @_;
    send_packet($s, 0, "\x16$sql") or return undef;
    my (undef, $pl) = read_packet($s);
    return undef unless defined $pl;
    return err_of($pl) if ord $pl == 0xff;
    my ($id, $cols, $params) = unpack 'x V v v', $pl;
    for my $n (grep { $_ > 0 } $params, $cols) {
        read_packet($s) for 0 .. $n;
    }
    send_packet($s, 0, stmt_execute(id => $id));
    my $bytes = read_response($s) // return undef;
    send_packet($s, 0, "\x19" . pack('V', $id));
    $pl = substr($bytes, 4);
    return err_of($pl) if ord $pl == 0xff;
    return { ok => Sluice::Wire::_ok_fields($pl) } if ord $pl == 0;
    return { lost => 'a result set to a CREATE' };
}

sub do_step {
    my ($rs, $st) = @_;
    my $s = $rs->{sock};
    my $op = $st->{op};
    return query($s, $st->{sql}) if $op eq 'sql';
    return binary_do($s, $st->{sql}) if $op eq 'bin';
    return reset_connection($rs) if $op eq 'reset';
    return change_user($rs, user => $st->{user}, password => $PW{$st->{user}},
                       db => $st->{db}, charset => $st->{cs})
        if $op eq 'change';
    if ($op eq 'init_db') {
        send_packet($s, 0, "\x02$st->{db}") or return undef;
        my (undef, $pl) = read_packet($s);
        return undef unless defined $pl;
        return err_of($pl) if ord $pl == 0xff;
        return { ok => Sluice::Wire::_ok_fields($pl) };
    }
    die "op $op?\n";
}

sub com_select { Sluice::Test::server_status($p, 'Com_select') }

# The marker read, on a session of its own: (n, whether the cache answered
# it: the server's Com_select did not move; only if $count).
sub marker_read {
    my ($rs, $count) = @_;
    my $c = $count ? com_select() : 0;
    my $r = query($rs->{sock}, 'SELECT n FROM mk WHERE id = 1');
    die 'the marker read: ' . answer($r) . "\n"
        unless $r && $r->{rows} && @{ $r->{rows} } == 1;
    return ($r->{rows}[0][0], $count && com_select() == $c);
}

# A step of the marker, whose answers are not compared.  mark: the marker
# read sees n and, with the cache, the cache answered it, so only the
# invalidation of the direct write that follows lets it see n + 1.  sync:
# it sees n, committed with the direct write: the binlog reader applied
# their group, the write's tables are invalidated too.  Within 10 s, or
# the test dies.  Returns how many of its reads the cache answered.
sub marker_step {
    my ($rs, $st, $cache, $where) = @_;
    my $hits = 0;
    my $ok = wait_for(sub {
        my ($n, $hit) = marker_read($rs, $cache);
        $hits++ if $hit;
        return $n == $st->{n} && ($hit || !$cache || $st->{op} eq 'sync');
    }, timeout => 10);
    return $hits if $ok;
    die "$where: the marker read did not see n = $st->{n} "
        . ($st->{op} eq 'sync'
           ? 'within 10 s: the binlog reader did not apply the direct write'
           : ($cache ? 'from the cache ' : '') . 'within 10 s') . "\n";
}

# Nobody is left on the databases (a transaction cut short by the close
# would hold the DROP of the next schema).
sub close_all {
    close $_->{sock} for grep { $_ } @OPEN;
    @OPEN = ();
    wait_for(sub { !$p->selectrow_array('SELECT COUNT(*) FROM '
        . "information_schema.processlist WHERE db IN ('$DA', '$DB') "
        . "OR user = '$OTHER'") }, what => 'the sessions to end');
}

# The script's sessions through $port but the direct one, on the
# primary; the marker's through $port.
sub open_sessions {
    my ($port) = @_;
    for my $i (0 .. $D) {
        my $l = $i == $D ? $DIRECT : $LOGIN[$i];
        $OPEN[$i] = raw_session($i == $D ? $t->primary_port : $port,
            user => $l->{user}, password => $PW{ $l->{user} },
            db => $l->{db}, charset => $l->{cs});
    }
    $OPEN[$D + 1] = raw_session($port, db => $DA, charset => 45)
        or die "no session for the marker read on port $port\n";
}

# Run the script through $port.  With record => [], every answer goes
# there; with expect => [...], each is compared.  Returns { statements,
# reads, differences, served, waits, marker_hits } (served: reads that
# found something and during which the server's Com_select did not move:
# the cache answered; waits: for the binlog reader, after a direct write;
# marker_hits: marker reads the cache answered).
sub run_script {
    my (%o) = @_;
    my $script = $o{script};
    my (@log, %res, $selects);
    $res{$_} = 0 for qw(statements reads differences served waits
                        marker_hits);
    open_sessions($o{port});
    for my $n (0 .. $#$script) {
        my $st = $script->[$n];
        my $i = $st->{s};
        my $rs = $OPEN[$i];
        my ($r, $moved);
        if ($st->{op} eq 'mark' || $st->{op} eq 'sync') {
            $res{marker_hits} += marker_step($OPEN[$D + 1], $st,
                !!$o{expect}, "$o{label}: seed $SEED, step $n");
            $res{waits}++ if $st->{op} eq 'sync';
            undef $selects;             # its reads moved Com_select
            push @log, { i => $i, a => '', cached => 0,
                         line => "#$n " . describe($st) };
            push @{ $o{record} }, '' if $o{record};
            next;
        }
        if (!$rs) {
            $r = { lost => "session $i is gone" };
        } else {
            # only reads are SELECTs: the count after one is the count
            # before the next
            my $count = $o{expect} && $st->{read};
            $selects //= com_select() if $count;
            $r = do_step($rs, $st);
            if ($count) {
                $moved = com_select() - $selects;
                $selects += $moved;
            }
            $OPEN[$i] = undef unless $r;
        }
        my $a = answer($r);
        $res{statements}++;
        my $cached = defined $moved && $moved == 0 && !$r->{err};
        if ($st->{read}) {
            $res{reads}++;
            $res{served}++ if $cached;
        }
        push @log, { i => $i, a => $a, cached => $cached, line =>
                     sprintf '#%d %s => %s', $n, describe($st), short($a) };
        if ($o{record}) {
            push @{ $o{record} }, $a;
            next;
        }
        my $want = $o{expect}[$n];
        next if $a eq $want;
        next if ++$res{differences} > $SHOW;
        show(\%o, $n, $want, $moved, \@log);
    }
    diag("$o{label}: " . ($res{differences} - $SHOW) . ' more differences '
         . 'not shown (SLUICE_DIFF_SHOW)') if $res{differences} > $SHOW;
    close_all();
    return \%res;
}

sub notrx { my ($a) = @_; $a =~ s/, in a transaction\z//; return $a }

# A difference at step $n: the statement, both answers, who answered it;
# for a hit, where the server gave that answer before (the store it
# came from, as far as one can tell) and what ran since; the session's
# history, the last statements of all.
sub show {
    my ($o, $n, $want, $moved, $log) = @_;
    my $script = $o->{script};
    my $st = $script->[$n];
    my $i = $st->{s};
    my $me = $log->[$n];
    diag("$o->{label}: seed $SEED, step $n of " . @$script
         . ": session $i ($st->{state}) gets another answer");
    diag('  statement:         ' . describe($st));
    diag("  without the cache: $want");
    diag("  with the cache:    $me->{a}");
    if ($me->{cached}) {
        diag('  the cache answered it (the server\'s Com_select did not '
             . 'move)');
        my ($m) = grep { $script->[$_]{read} && !$log->[$_]{cached}
                         && notrx($log->[$_]{a}) eq notrx($me->{a})
                         && ($script->[$_]{sql} // '') eq $st->{sql} }
                  reverse 0 .. $n - 1;
        if (defined $m) {
            diag("  the server gave that answer at #$m to session "
                 . "$script->[$m]{s} ($script->[$m]{state}); "
                 . 'since then, but for reads:');
            my @w = grep { !$script->[$_]{read} } $m + 1 .. $n - 1;
            splice @w, 0, @w - 16 if @w > 16;
            diag("    session $script->[$_]{s}: $log->[$_]{line}") for @w;
        }
    } elsif (defined $moved) {
        diag("  the server answered it (its Com_select +$moved)");
    }
    my @h = grep { $log->[$_]{i} == $i } 0 .. $n - 1;
    splice @h, 0, @h - 25 if @h > 25;
    diag("  session $i until then:");
    diag("    $log->[$_]{line}") for @h;
    diag('  the last statements of all sessions:');
    diag("    session $log->[$_]{i}: $log->[$_]{line}")
        for ($n > 8 ? $n - 8 : 0) .. $n - 1;
}

my $t0 = time;
my $script = generate($SEED, $STEPS);
my %kinds;
$kinds{ $_->{op} =~ /^(?:mark|sync)\z/ ? 'marker'
        : $_->{s} == $D ? 'direct'
        : $_->{op} eq 'sql' ? ($_->{read} ? 'read' : 'other') : $_->{op} }++
    for @$script;
note(sprintf 'seed %d: %d statements (%s)', $SEED, scalar @$script,
     join ', ', map { "$kinds{$_} $_" } sort keys %kinds);

sub hits { $t->cache_stats($_[0])->{hits} }

# auth local, then auth passthrough: without the cache, then with it
for my $mode (['auth local', 1, 0, 'qc'], ['auth passthrough', 3, 2, 'qcp'])
{
    my ($label, $plain, $cached, $zone) = @$mode;
    my @want;
    schema($t->port($cached));
    my $r0 = run_script(port => $t->port($plain), script => $script,
                        record => \@want, label => "$label, no cache");
    # (1205: a lock wait timeout, 1213: a deadlock)
    ok(!grep({ /^no answer|is gone|^ERR 12(?:05|13)/ } @want), "$label, "
       . 'without the cache: the script runs to its end, no statement '
       . "waits for a lock ($r0->{statements} statements, $r0->{reads} "
       . 'reads)');
    schema($t->port($cached));
    my $h0 = hits($zone);
    my $r = run_script(port => $t->port($cached), script => $script,
                       expect => \@want, label => "$label, cache");
    my $hits = hits($zone) - $h0 - $r->{marker_hits};
    is($r->{differences}, 0, "$label: every answer through the cache is "
       . "the answer without it (seed $SEED, $r->{statements} statements, "
       . "$r->{waits} direct writes)");
    note("$label: $r->{reads} reads, $hits cache hits, $r->{served} reads "
         . "the server did not see (and $r->{marker_hits} hits of the "
         . 'marker read)');
    ok($hits >= 20 && $hits >= $r->{reads} / 50, "$label: the cache "
       . "answered a fair share of the reads ($hits hits of $r->{reads})");
}
note(sprintf 'the differential runs took %.1f s', time - $t0);


# --- a SELECT longer than buffer_size ------------------------------------

# It is a read like any other: the cache keeps what it held, and goes on
# serving the session that sent it.
{
    schema($t->port(0));
    my @s = map { raw_session($t->port(0), db => $DA) } 1 .. 2;
    @OPEN = @s;
    my $q = 'SELECT id, v FROM t1 WHERE id = 2';
    my $hit = sub {
        my ($rs) = @_;
        my $h = hits('qc');
        my $r = query($rs->{sock}, $q);
        return $r && $r->{rows} && hits('qc') == $h + 1;
    };
    # (the schema was just made: the cache may want a moment to learn it)
    ok(wait_for(sub { $hit->($s[0]) }, what => 'a hit'),
       'a read again is a hit');
    my $long = query($s[1]{sock}, $LONG);
    ok($long && $long->{rows} && @{ $long->{rows} } == 7,
       'a SELECT longer than buffer_size is answered');
    ok($hit->($s[0]), 'after it, what the cache held is still there');
    ok($hit->($s[1]), 'and the session that sent it is still served from '
       . 'the cache');
    close_all();
}

cleanup();
