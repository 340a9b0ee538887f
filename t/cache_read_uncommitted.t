#!/usr/bin/perl

# Regression: SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED was left
# out of the cache's key (a SET TRANSACTION was taken for one that only
# shapes the next transaction's locking), so a dirty read, the value of
# another connection's uncommitted UPDATE, was stored under the same key
# as everyone's and served to a REPEATABLE READ session after that
# UPDATE was rolled back.  What must hold: a read under READ UNCOMMITTED
# (the next transaction's, or the session's) is neither stored nor served
# from the cache: a REPEATABLE READ session then reads the committed
# value, and each repeated read under READ UNCOMMITTED reaches the server
# (its Com_select moves by one every time).

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
$p->do("INSERT INTO test.$tab VALUES (1, 1), (2, 1)");
END { eval { $t->primary_dbh->do("DROP TABLE IF EXISTS test.$tab") }
      if $t }

$t->run_cache(plan => 13);

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

# The worker learns the server's greeting (the MariaDB capabilities
# Connector/C then asks for, which are in the key) from its first backend
# connection: let it meet the server before sessions' keys are compared.
$t->dbh->selectrow_array('SELECT 1');

# A direct connection to the primary with an uncommitted UPDATE of row
# $id (v 1 -> 2), not through the proxy: nothing is invalidated.
sub dirty {
    my ($id) = @_;
    my $d = $t->primary_dbh;
    $d->begin_work;
    $d->do("UPDATE test.$tab SET v = 2 WHERE id = $id");
    return $d;
}

# --- SET TRANSACTION: the next transaction (an autocommit SELECT) -----------

my $q1 = "SELECT v FROM $tab WHERE id = 1";
my $d = dirty(1);
my $a = $t->dbh;
ok($a->do('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED'),
   'session A: SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
is(scalar $a->selectrow_array($q1), 2, 'A reads the uncommitted 2 (right '
   . 'for READ UNCOMMITTED)');
$d->rollback;
is(scalar $p->selectrow_array("SELECT v FROM test.$tab WHERE id = 1"), 1,
   'the direct connection rolled back: the server holds 1');
my $b = $t->dbh;
is(scalar $b->selectrow_array($q1), 1, 'session B (REPEATABLE READ) reads '
   . '1, not the dirty read A had');
is(scalar $a->selectrow_array($q1), 1, 'and so does A, its next '
   . 'transaction back under REPEATABLE READ');

# --- SET SESSION TRANSACTION: every read of the session -----------------------

my $q2 = "SELECT v FROM $tab WHERE id = 2";
$d = dirty(2);
my $s = $t->dbh;
ok($s->do('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED'),
   'session S: SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
my $v;
is(served(sub { ($v) = $s->selectrow_array($q2) }), 1, 'S\'s read reaches '
   . 'the server');
is($v, 2, 'and sees the uncommitted 2');
is(served(sub { ($v) = $s->selectrow_array($q2) }), 1, 'S\'s read again: '
   . 'the server again (a read under READ UNCOMMITTED is never stored)');
$d->rollback;
is(served(sub { ($v) = $s->selectrow_array($q2) }), 1, 'after the '
   . 'rollback, S\'s read: the server again (never served from the cache)');
is($v, 1, 'and sees 1');
my $b2 = $t->dbh;
is(scalar $b2->selectrow_array($q2), 1, 'session B2 (REPEATABLE READ) '
   . 'reads 1');
my @d = map { served(sub { $s->selectrow_array($q2) }) } 1 .. 3;
is("@d", '1 1 1', 'three more reads of S: each reaches the server');
