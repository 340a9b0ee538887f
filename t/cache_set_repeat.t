#!/usr/bin/perl

# Regression: the cache dropped a repeated SET from its key.  The key
# holds the session's SETs, and a SET already in it was not added again,
# so "SET x=1; SET x=1000; SET x=1" had the key of "SET x=1; SET x=1000"
# while the server runs with x=1: a session that set
# sql_select_limit=1, 1000, then 1 again was served the 6 rows another
# session stored under limit 1000; and the same with sql_mode
# (PAD_CHAR_TO_FULL_LENGTH set, reset, set again: the unpadded CHAR).
# What must hold: a read after a SET is answered as the server would
# answer it with the session's values in force, whatever SETs came
# before; and a session that repeats the same SET many times (SET NAMES
# fifty times) is still served from the cache (the key does not grow
# without bound and turn the cache off).  Whether the server answered is
# told by its Com_select.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my $tab = $t->name . '_t6';
my $chr = $t->name . '_c';
$p->do("CREATE OR REPLACE TABLE test.$tab (id INT PRIMARY KEY, v INT)");
$p->do("INSERT INTO test.$tab SELECT seq, seq * 10 FROM seq_1_to_6");
$p->do("CREATE OR REPLACE TABLE test.$chr (id INT PRIMARY KEY, "
       . 'c CHAR(10))');
$p->do("INSERT INTO test.$chr VALUES (1, 'ab')");
END { eval { $t->primary_dbh->do("DROP TABLE IF EXISTS test.$tab, "
                                  . "test.$chr") } if $t }

$t->run_cache(plan => 11);

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

# The worker learns the server's greeting (the MariaDB capabilities
# Connector/C then asks for, which are in the key) from its first backend
# connection: let it meet the server before sessions' keys are compared.
$t->dbh->selectrow_array('SELECT 1');

# --- sql_select_limit: 1, 1000, 1 again ---------------------------------------

my $all = "SELECT * FROM $tab";
my $x = $t->dbh;
$x->do('SET sql_select_limit = 1');
$x->do('SET sql_select_limit = 1000');
is(scalar @{ $x->selectall_arrayref($all) }, 6,
   'session X (limit 1, then 1000): 6 rows');
is(served(sub { $x->selectall_arrayref($all) }), 0, 'stored: X\'s next '
   . 'read is a hit');

my $y = $t->dbh;
$y->do('SET sql_select_limit = 1');
$y->do('SET sql_select_limit = 1000');
$y->do('SET sql_select_limit = 1');
my $rows = $y->selectall_arrayref($all);
is(scalar @$rows, 1, 'session Y (limit 1, 1000, then 1 again): 1 row, '
   . 'as the server answers under sql_select_limit=1');
is(scalar @{ $y->selectall_arrayref($all) }, 1, 'and again');

# --- sql_mode: PAD_CHAR_TO_FULL_LENGTH set, reset, set again -------------------

my $cq = "SELECT c FROM $chr WHERE id = 1";
my $mx = $t->dbh;
$mx->do("SET sql_mode = 'PAD_CHAR_TO_FULL_LENGTH'");
$mx->do("SET sql_mode = ''");
is(scalar $mx->selectrow_array($cq), 'ab',
   'session X (padding set, then reset): the CHAR unpadded, stored');

my $my = $t->dbh;
$my->do("SET sql_mode = 'PAD_CHAR_TO_FULL_LENGTH'");
$my->do("SET sql_mode = ''");
$my->do("SET sql_mode = 'PAD_CHAR_TO_FULL_LENGTH'");
is(scalar $my->selectrow_array($cq), 'ab' . ' ' x 8,
   'session Y (padding set, reset, set again): the CHAR padded to 10, as '
   . 'the server answers');

# --- the same SET many times: still served from the cache -------------------

my $n = $t->dbh;
$n->do('SET NAMES utf8mb4') for 1 .. 50;
my $q = "SELECT v FROM $tab WHERE id = 2";
is(served(sub { $n->selectrow_array($q) }), 1, 'fifty SET NAMES, then a '
   . 'read: a miss');
my $v;
is(served(sub { ($v) = $n->selectrow_array($q) }), 0,
   'the same read again is served from the cache');
is($v, 20, 'with the row');
$n->do('SET NAMES utf8mb4') for 1 .. 50;
served(sub { $n->selectrow_array($q) });
is(served(sub { ($v) = $n->selectrow_array($q) }), 0,
   'fifty more: still served from the cache');
is($v, 20, 'with the row');
