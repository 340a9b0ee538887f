#!/usr/bin/perl

# Regression: one SELECT longer than buffer_size flushed the whole cache
# and turned the session's cache off.  The filter sees only the first
# buffer of such a statement, and took any statement it could not read
# whole for a write that may also SET: it invalidated every entry of
# every session and made the session's variables unknown, so a client
# sending one 20 KB SELECT (a long IN list) emptied the cache for all
# and was never again served from it.  What must hold (buffer_size 16k):
# after another session's 20 KB SELECT, an entry is still a hit, and
# that session's own later reads are served from the cache; but a long
# statement whose tail, beyond the buffer, writes still invalidates: a
# multi-statement `SELECT ... <pad>; UPDATE t13a ...`, and a long SELECT
# whose tail calls a stored function that writes t13a.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my ($ta, $tb) = map { $t->name . "_t13$_" } qw(a b);
my $fn = $t->name . '_fn';
$p->do("CREATE OR REPLACE TABLE test.$ta (id INT PRIMARY KEY, v INT)");
$p->do("INSERT INTO test.$ta VALUES (1, 1)");
$p->do("CREATE OR REPLACE TABLE test.$tb (id INT PRIMARY KEY, v INT)");
$p->do("INSERT INTO test.$tb SELECT seq, seq FROM seq_1_to_10");
# CREATE FUNCTION under binary logging wants SUPER or this; put it back
my ($trust) = $p->selectrow_array('SELECT @@log_bin_trust_function_creators');
$p->do('SET GLOBAL log_bin_trust_function_creators = 1');
END {
    eval { $t->primary_dbh->do('SET GLOBAL log_bin_trust_function_creators '
                               . "= $trust") } if defined $trust;
}
$p->do("CREATE OR REPLACE FUNCTION test.$fn(x INT) RETURNS INT "
       . "MODIFIES SQL DATA BEGIN UPDATE test.$ta SET v = x WHERE id = 1; "
       . 'RETURN x; END');
END { eval { my $d = $t->primary_dbh;
             $d->do("DROP FUNCTION IF EXISTS test.$fn");
             $d->do("DROP TABLE IF EXISTS test.$ta, test.$tb") } if $t }

$t->run_cache(plan => 15, mysql => "    buffer_size 16k;\n");

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

# The worker learns the server's greeting (the MariaDB capabilities
# Connector/C then asks for, which are in the key) from its first backend
# connection: let it meet the server before sessions' keys are compared.
$t->dbh->selectrow_array('SELECT 1');

# A 20 KB SELECT of table $tb: a long IN list, then $tail.
sub long_select {
    my ($tail) = @_;
    my $in = join(', ', 1000 .. 5000);
    return "SELECT COUNT(*) FROM $tb WHERE id IN ($in) OR id = 1$tail";
}
my $long = long_select('');
cmp_ok(length $long, '>', 20000, 'a SELECT of ' . length($long)
       . ' bytes: more than buffer_size (16k)');

# --- a long SELECT flushes nothing and leaves the session's cache on ------

my $e = "SELECT v FROM $ta WHERE id = 1";
my $s1 = $t->dbh;
$s1->selectrow_array($e);
is(served(sub { $s1->selectrow_array($e) }), 0, 'session S1\'s entry E '
   . 'is a hit');
my $s2 = $t->dbh;
my ($cnt) = $s2->selectrow_array($long);
is($cnt, 1, 'session S2 sends the 20 KB SELECT: the server\'s answer');
is(served(sub { $s1->selectrow_array($e) }), 0, 'E is still a hit (the '
   . 'long SELECT flushed nothing)');
my $short = "SELECT v FROM $tb WHERE id = 2";
$s2->selectrow_array($short);
my $v;
is(served(sub { ($v) = $s2->selectrow_array($short) }), 0, 'S2\'s own '
   . 'later short read, warm, is served from the cache');
is($v, 2, 'with its row');
is(served(sub { $s2->selectrow_array($e) }), 0, 'and so is E for S2');

# --- a long statement whose tail writes still invalidates --------------------

my $m = $t->dbh(mariadb_multi_statements => 1);
ok($m, 'a session with MULTI_STATEMENTS');
my $multi = long_select("; UPDATE $ta SET v = 9 WHERE id = 1");
my $sth = $m->prepare($multi);
ok($sth && $sth->execute, 'it sends `SELECT <20 KB>; UPDATE t13a SET v = 9`');
if ($sth) {
    do { $sth->fetchall_arrayref if $sth->{NUM_OF_FIELDS} }
        while ($sth->more_results);
}
is(scalar $p->selectrow_array("SELECT v FROM test.$ta WHERE id = 1"), 9,
   'the server holds 9');
is(scalar $s1->selectrow_array($e), 9, 'E is invalidated: S1 reads 9');

$s1->selectrow_array($e);
is(served(sub { $s1->selectrow_array($e) }), 0, 'E is kept again');
my $fcall = long_select(" OR $fn(7) = 0");
my $s3 = $t->dbh;
ok(defined $s3->selectrow_array($fcall), 'a 20 KB SELECT whose tail calls '
   . 'a stored function that writes t13a');
is(scalar $p->selectrow_array("SELECT v FROM test.$ta WHERE id = 1"), 7,
   'the server holds 7');
is(scalar $s1->selectrow_array($e), 7, 'E is invalidated: S1 reads 7');
