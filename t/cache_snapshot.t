#!/usr/bin/perl

# Regression: reads inside a READ ONLY transaction with a snapshot were
# stored and served from the cache.  Under REPEATABLE READ such a
# transaction reads from its snapshot: (a) START TRANSACTION WITH
# CONSISTENT SNAPSHOT, READ ONLY, then another session's UPDATE (v 1 ->
# 2), then a read gives 1, rightly for that transaction, but the cache kept
# that 1 after the invalidation, and a new session was served it after
# the COMMIT; (b) in START TRANSACTION READ ONLY, a read (1) fixes the
# snapshot, another session updates (3) and a third reads 3 (kept): the
# transaction's next read was served that 3 instead of its snapshot's 1.
# What must hold: a read in a snapshot transaction is neither stored for
# others nor answered from entries newer than its snapshot; while
# reads that have no snapshot are still served from the cache: in a
# READ ONLY transaction of a session at READ COMMITTED (each statement
# reads the latest committed rows), and in autocommit.  Whether the
# server answered is told by its Com_select.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my $tab = $t->name . '_t';
$p->do("CREATE OR REPLACE TABLE test.$tab (id INT PRIMARY KEY, v INT) "
       . 'ENGINE=InnoDB');
$p->do("INSERT INTO test.$tab VALUES (1, 1), (2, 1), (3, 1), (4, 1)");
END { eval { $t->primary_dbh->do("DROP TABLE IF EXISTS test.$tab") }
      if $t }

$t->run_cache(plan => 16);

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

# The worker learns the server's greeting (the MariaDB capabilities
# Connector/C then asks for, which are in the key) from its first backend
# connection: let it meet the server before sessions' keys are compared.
$t->dbh->selectrow_array('SELECT 1');

my $b = $t->dbh;        # the writer, autocommit, through the proxy

# --- (a) WITH CONSISTENT SNAPSHOT: a read after another's write ------------

my $qa = "SELECT v FROM $tab WHERE id = 1";
my $a = $t->dbh;
ok($a->do('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY'),
   '(a) A: START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
ok($b->do("UPDATE $tab SET v = 2 WHERE id = 1"), 'B updates v to 2');
is(scalar $a->selectrow_array($qa), 1, 'A reads its snapshot\'s 1');
ok($a->do('COMMIT'), 'A commits');
my $c = $t->dbh;
is(scalar $c->selectrow_array($qa), 2, 'a new session C reads 2, not the '
   . 'snapshot\'s 1');
is(scalar $a->selectrow_array($qa), 2, 'and so does A now');

# --- (b) READ ONLY: the snapshot of the first read ----------------------------

my $qb = "SELECT v FROM $tab WHERE id = 2";
$a = $t->dbh;
ok($a->do('START TRANSACTION READ ONLY'), '(b) A: START TRANSACTION READ '
   . 'ONLY');
is(scalar $a->selectrow_array($qb), 1, 'A reads 1 (its snapshot now)');
ok($b->do("UPDATE $tab SET v = 3 WHERE id = 2"), 'B updates v to 3');
$c = $t->dbh;
is(scalar $c->selectrow_array($qb), 3, 'a new session C reads 3');
is(scalar $a->selectrow_array($qb), 1, 'A reads again: 1 (REPEATABLE '
   . 'READ), not C\'s 3');
$a->do('COMMIT');

# --- (c) what is still served: no snapshot --------------------------------------

my $qc = "SELECT v FROM $tab WHERE id = 3";
my $rc = $t->dbh;
ok($rc->do('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'),
   '(c) a session at READ COMMITTED');
$rc->selectrow_array($qc);                          # the warm-up
$rc->do('START TRANSACTION READ ONLY');
my $v;
is(served(sub { ($v) = $rc->selectrow_array($qc) }), 0, 'in START '
   . 'TRANSACTION READ ONLY, its read is served from the cache');
is($v, 1, 'with the row');
$rc->do('COMMIT');

my $qd = "SELECT v FROM $tab WHERE id = 4";
my $ac = $t->dbh;
$ac->selectrow_array($qd);
is(served(sub { ($v) = $ac->selectrow_array($qd) }), 0, 'an autocommit '
   . 'read is served from the cache');
is($v, 1, 'with the row');
