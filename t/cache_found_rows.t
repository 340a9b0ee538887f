#!/usr/bin/perl

# Regression: FOUND_ROWS() and ROW_COUNT() after a cache hit answered for
# an older statement.  They are never cached, so the server answers them,
# but for the last statement it ran, not for the hit the client had
# after it: SELECT SQL_CALC_FOUND_ROWS ... LIMIT 1 a second time (a hit),
# then FOUND_ROWS() gave 1 (for the FOUND_ROWS() before) instead of 6;
# a hit of 3 rows after a read of 5, then FOUND_ROWS(), gave 5; an
# INSERT, a hit, then ROW_COUNT() gave the INSERT's 1 instead of -1.
# What must hold: through the proxy, each sequence gives what the server
# gives when a session runs it directly.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my $tab = $t->name . '_t11';
my $log = $t->name . '_w';
$p->do("CREATE OR REPLACE TABLE test.$tab (id INT PRIMARY KEY, v INT)");
$p->do("INSERT INTO test.$tab SELECT seq, seq FROM seq_1_to_6");
$p->do("CREATE OR REPLACE TABLE test.$log (x INT)");
END { eval { $t->primary_dbh->do("DROP TABLE IF EXISTS test.$tab, "
                                  . "test.$log") } if $t }

$t->run_cache(plan => 9);

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

# The worker learns the server's greeting (the MariaDB capabilities
# Connector/C then asks for, which are in the key) from its first backend
# connection: let it meet the server before sessions' keys are compared.
$t->dbh->selectrow_array('SELECT 1');

# Runs the statements on $dbh; the answers of the FOUND_ROWS() and
# ROW_COUNT() among them, in order.
sub run_seq {
    my ($dbh, @sql) = @_;
    my @got;
    for my $sql (@sql) {
        if ($sql =~ /^SELECT (?:FOUND_ROWS|ROW_COUNT)\(\)\z/) {
            push @got, scalar $dbh->selectrow_array($sql);
        } elsif ($sql =~ /^SELECT/) {
            $dbh->selectall_arrayref($sql);
        } else {
            $dbh->do($sql);
        }
    }
    return \@got;
}

# (a) SQL_CALC_FOUND_ROWS twice, FOUND_ROWS() after each
my $calc = "SELECT SQL_CALC_FOUND_ROWS * FROM $tab LIMIT 1";
my @a = ($calc, 'SELECT FOUND_ROWS()', $calc, 'SELECT FOUND_ROWS()');
my $direct = run_seq($t->primary_dbh, @a);
is_deeply($direct, [6, 6], 'directly: SQL_CALC_FOUND_ROWS ... LIMIT 1, '
          . 'FOUND_ROWS() 6, again, 6');
my $proxy = $t->dbh;
my $n = served(sub { $proxy->selectall_arrayref($calc) })
    + served(sub { $proxy->selectall_arrayref($calc) });
note("the SQL_CALC_FOUND_ROWS read reached the server $n time(s) of 2");
my $got = run_seq($t->dbh, @a);
is_deeply($got, $direct, 'through the proxy: the same')
    or diag("got @$got");

# (b) a hit of 3 rows after a read of 5
my @b = ("SELECT * FROM $tab WHERE id <= 3",
         "SELECT * FROM $tab WHERE id <= 5",
         "SELECT * FROM $tab WHERE id <= 3", 'SELECT FOUND_ROWS()');
$direct = run_seq($t->primary_dbh, @b);
is_deeply($direct, [3], 'directly: 3 rows, 5 rows, 3 rows, FOUND_ROWS() 3');
$proxy = $t->dbh;
run_seq($proxy, $b[0]);
is(served(sub { run_seq($proxy, $b[0]) }), 0, 'the read of 3 rows is kept');
$got = run_seq($proxy, @b);
is_deeply($got, $direct, 'through the proxy: the same (3, not 5)')
    or diag("got @$got");
$got = run_seq($t->dbh, @b);
is_deeply($got, $direct, 'and in a new session') or diag("got @$got");

# (c) an INSERT, a hit, ROW_COUNT()
my $read = "SELECT * FROM $tab WHERE id = 2";
my @c = ("INSERT INTO $log VALUES (1)", $read, 'SELECT ROW_COUNT()');
$direct = run_seq($t->primary_dbh, @c);
is_deeply($direct, [-1], 'directly: INSERT, a SELECT, ROW_COUNT() -1');
$proxy = $t->dbh;
run_seq($proxy, $read);
is(served(sub { run_seq($proxy, $read) }), 0, 'the read is kept');
$got = run_seq($proxy, @c);
is_deeply($got, $direct, 'through the proxy: the same (-1, not the '
          . 'INSERT\'s 1)') or diag("got @$got");
