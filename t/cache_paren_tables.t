#!/usr/bin/perl

# Regression: a table named after a comma inside parentheses, as in
# `FROM (r1, r2)`, `UPDATE (r1, r2) SET ...`, `UPDATE r1 JOIN (r1 AS x,
# r2) SET ...` or `DELETE r2 FROM (r1, r2) ...`, was not among the
# statement's tables for the cache: a SELECT's entry was not named after
# it, and a write to it did not invalidate the entries that read it, so
# they stayed stale.  What must hold: after each of those writes through
# the proxy, a SELECT of the parenthesised form and a plain SELECT of r2
# both show the server's current rows; and a plain write to r2
# invalidates the parenthesised SELECT.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my ($r1, $r2) = map { $t->name . "_$_" } qw(r1 r2);
$p->do("CREATE OR REPLACE TABLE test.$r1 (a INT PRIMARY KEY)");
$p->do("CREATE OR REPLACE TABLE test.$r2 (a INT PRIMARY KEY, b INT)");
$p->do("INSERT INTO test.$r1 VALUES (1)");
$p->do("INSERT INTO test.$r2 VALUES (1, 10)");
END { eval { $t->primary_dbh->do("DROP TABLE IF EXISTS test.$r1, "
                                  . "test.$r2") } if $t }

$t->run_cache(plan => 22);

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

my %q = (
    paren => "SELECT $r2.b FROM ($r1, $r2) WHERE $r1.a = $r2.a",
    plain => "SELECT b FROM $r2 WHERE a = 1",
);
my $rd = $t->dbh;
my $w = $t->dbh;

# What each read gives through the proxy ('' for no row), after it was
# kept: read, then read again (the second a hit when the entry is fresh).
# Each case has texts of its own (AND N = N), so that what one write left
# stale does not show in the next case.
sub reads {
    my ($n) = @_;
    my %got;
    for my $k (sort keys %q) {
        my ($v) = $rd->selectrow_array("$q{$k} AND $n = $n");
        $rd->selectrow_array("$q{$k} AND $n = $n");
        $got{$k} = $v // '';
    }
    return \%got;
}

my $server = 10;
is_deeply(reads(0), { paren => 10, plain => 10 }, 'both reads: 10');
is(served(sub { $rd->selectrow_array("$q{$_} AND 0 = 0") for keys %q }), 0,
   'kept: both served from the cache');

my $n = 0;
for my $case (
    [ "UPDATE ($r1, $r2) SET $r2.b = 11 WHERE $r1.a = $r2.a", 11 ],
    [ "UPDATE $r1 JOIN ($r1 AS x, $r2) SET $r2.b = 12 "
      . "WHERE $r1.a = x.a AND x.a = $r2.a", 12 ],
    [ "DELETE $r2 FROM ($r1, $r2) WHERE $r1.a = $r2.a", '' ],
    [ "INSERT INTO $r2 VALUES (1, 13)", 13 ],
    [ "UPDATE $r2 SET b = 14 WHERE a = 1", 14 ],
) {
    my ($sql, $want) = @$case;
    $n++;
    is_deeply(reads($n), { paren => $server, plain => $server },
              'both reads (kept) show the server\'s rows before: '
              . ($server eq '' ? 'none' : $server));
    ok($w->do($sql), "through the proxy: $sql");
    $server = ($p->selectrow_array("SELECT b FROM test.$r2 WHERE a = 1"))
        [0] // '';
    is($server, $want, 'the server holds ' . ($want eq '' ? 'no row' : $want));
    is_deeply(reads($n), { paren => $server, plain => $server },
              'both reads show the server\'s rows after it');
}
