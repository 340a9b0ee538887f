#!/usr/bin/perl

# Regression: after COM_RESET_CONNECTION the cache took the session's
# default database to be its login database, while the server keeps the
# one the session had (USE db2 before the reset: db2 stays).  A session
# that logged in to test, said USE db2 and reset was served test's
# entry for a statement the server runs in db2.  What must hold: after a
# reset, a read is answered in the database the server says is the
# session's (the one it had), and the SETs of before the reset are gone
# for the cache as for the server (sql_select_limit=1, reset: all rows).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query reset_connection);

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my $tab = $t->name . '_t';
my $db2 = $t->name . '_db2';
$p->do("CREATE OR REPLACE TABLE test.$tab (id INT PRIMARY KEY, "
       . 'v VARCHAR(16))');
$p->do("INSERT INTO test.$tab VALUES (1, 'test'), (2, 'two'), (3, 'three')");
$p->do("CREATE DATABASE IF NOT EXISTS $db2");
$p->do("CREATE OR REPLACE TABLE $db2.$tab (id INT PRIMARY KEY, "
       . 'v VARCHAR(16))');
$p->do("INSERT INTO $db2.$tab VALUES (1, 'db2')");
END { eval { my $d = $t->primary_dbh;
             $d->do("DROP TABLE IF EXISTS test.$tab");
             $d->do("DROP DATABASE IF EXISTS $db2") } if $t }

$t->run_cache(plan => 11);

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

sub col0 { my ($r) = @_; return $r && $r->{rows} ? $r->{rows}[0][0] : undef }

# --- the server keeps the database across a reset ---------------------------

my $direct = raw_session($t->primary_port, db => 'test');
query($direct->{sock}, "USE $db2");
ok(reset_connection($direct)->{ok}, 'directly: USE db2, then '
   . 'COM_RESET_CONNECTION');
is(col0(query($direct->{sock}, 'SELECT DATABASE()')), $db2,
   'the server keeps db2 as the default database');
close $direct->{sock};

# --- the cache must answer in that database ---------------------------------

my $q = "SELECT v FROM $tab WHERE id = 1";
my $x = raw_session($t->port(0), db => 'test');
is(col0(query($x->{sock}, $q)), 'test', 'session X in test: test\'s row');
is(served(sub { query($x->{sock}, $q) }), 0, 'stored: X\'s next read is a '
   . 'hit');

my $y = raw_session($t->port(0), db => 'test');
ok(query($y->{sock}, "USE $db2")->{ok}, 'session Y logged in to test: '
   . 'USE db2');
ok(reset_connection($y)->{ok}, 'COM_RESET_CONNECTION');
is(col0(query($y->{sock}, $q)), 'db2', 'the same text gives db2\'s row, as '
   . 'the server answers it in db2');
is(col0(query($y->{sock}, 'SELECT DATABASE()')), $db2, 'the session\'s '
   . 'database is db2');

# --- the SETs are gone -------------------------------------------------------

my $all = "SELECT id FROM $tab ORDER BY id";
my $z = raw_session($t->port(0), db => 'test');
query($z->{sock}, 'SET sql_select_limit = 1');
is(scalar @{ query($z->{sock}, $all)->{rows} // [] }, 1,
   'session Z, SET sql_select_limit=1: one row');
ok(reset_connection($z)->{ok}, 'COM_RESET_CONNECTION');
is(scalar @{ query($z->{sock}, $all)->{rows} // [] }, 3,
   'after the reset the limit is gone: all 3 rows');

close $_->{sock} for $x, $y, $z;
