#!/usr/bin/perl

# Regression (issue 19, item 2): a user variable assigned by a statement
# that runs on the primary alone (SELECT ... INTO @x, SELECT @y := ...,
# SET @z := (SELECT ... FROM t)) was read on the replica, where it is
# NULL.  Now a read of a user variable goes to the primary once one was
# assigned there; SET @a = 1, copied to every backend, still lets such a
# read run on the replica; a reset forgets it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query reset_connection);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my ($pid, $rid) = $t->run_rwsplit(plan => 12);
my $P = $t->primary_dbh;
my $R = $t->replica_dbh;
$P->do('CREATE OR REPLACE TABLE test.rws_uv (id INT PRIMARY KEY, v INT)');
$P->do('INSERT INTO test.rws_uv VALUES (1, 44)');
# (eval: until replication made it, the table does not exist there)
ok(wait_for(sub { eval { ($R->selectrow_array(
       'SELECT COUNT(*) FROM test.rws_uv'))[0] } }, what => 'replication'),
   'the table on the replica');

sub where {
    my ($id) = @_;
    return !defined $id ? 'undef' : $id == $pid ? 'primary'
         : $id == $rid ? 'replica' : "? $id";
}

sub session {
    my $d = $t->dbh;
    wait_for(sub { where(($d->selectrow_array('SELECT @@server_id'))[0])
                   eq 'replica' }, what => 'a read on the replica');
    return $d;
}

my $d = session();
ok($d->do('SET @a = 1'), 'SET @a = 1 (to every backend)');
is_deeply([ map { $_ // 'NULL' } $d->selectrow_array('SELECT @a, @@server_id') ],
          [ 1, $rid ], 'SELECT @a: 1, on the replica');

$d = session();
ok($d->do('SELECT 42 INTO @x'), 'SELECT 42 INTO @x');
is(($d->selectrow_array('SELECT @x'))[0], 42, 'SELECT @x: 42');

$d = session();
is(($d->selectrow_array('SELECT @y := 43'))[0], 43, 'SELECT @y := 43');
is(($d->selectrow_array('SELECT @y'))[0], 43, 'SELECT @y: 43');

$d = session();
ok($d->do('SET @z := (SELECT v FROM rws_uv WHERE id = 1)'),
   'SET @z := (SELECT v FROM rws_uv WHERE id = 1)');
is(($d->selectrow_array('SELECT @z'))[0], 44, 'SELECT @z: 44');
is(where(($d->selectrow_array('SELECT @@server_id'))[0]), 'replica',
   'a read without user variables still goes to the replica');

# a reset forgets the variables, and where they were
my $rs = raw_session($t->port(0), db => 'test');
query($rs->{sock}, 'SELECT 42 INTO @x');
ok(reset_connection($rs)->{ok}, 'COM_RESET_CONNECTION after SELECT INTO @x');
my $r = query($rs->{sock}, 'SELECT @x IS NULL, @@server_id');
is_deeply($r && $r->{rows} ? $r->{rows}[0] : undef, [ 1, $rid ],
          'after it @x is NULL, read on the replica');
