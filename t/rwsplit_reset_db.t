#!/usr/bin/perl

# Regression (issue 19, item 3): MariaDB keeps the current database across
# COM_RESET_CONNECTION, but readwritesplit opened the next replica
# backend in the login database: after USE db2 and a reset, reads went to
# test's table while writes went to db2's.  Now the reset keeps the USE of
# the session's history; when the database may have changed where the
# router could not follow it (a multi-statement's USE), the session stays
# on the primary after the reset.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query query_all reset_connection);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my ($pid, $rid) = $t->run_rwsplit(plan => 10);
my $P = $t->primary_dbh;
my $R = $t->replica_dbh;
$P->do('CREATE DATABASE IF NOT EXISTS rws_db2');
$P->do('CREATE OR REPLACE TABLE test.rws_which (v VARCHAR(10))');
$P->do("INSERT INTO test.rws_which VALUES ('test')");
$P->do('CREATE OR REPLACE TABLE rws_db2.rws_which (v VARCHAR(10))');
$P->do("INSERT INTO rws_db2.rws_which VALUES ('db2')");
# (eval: until replication made it, the table does not exist there)
ok(wait_for(sub { eval { ($R->selectrow_array(
       'SELECT COUNT(*) FROM rws_db2.rws_which'))[0] } },
       what => 'replication'),
   'the tables on the replica');

sub row0 { my ($r) = @_; return $r && $r->{rows} ? $r->{rows}[0] : undef }

# directly, the server keeps the database
my $direct = raw_session($t->primary_port, db => 'test');
query($direct->{sock}, 'USE rws_db2');
reset_connection($direct);
is(row0(query($direct->{sock}, 'SELECT DATABASE()'))->[0], 'rws_db2',
   'directly: USE rws_db2, reset: still rws_db2');

my $s = raw_session($t->port(0), db => 'test');
ok(query($s->{sock}, 'USE rws_db2')->{ok}, 'through sluice: USE rws_db2');
ok(reset_connection($s)->{ok}, 'COM_RESET_CONNECTION');
ok(wait_for(sub { (row0(query($s->{sock}, 'SELECT @@server_id')) // [])->[0]
                  == $rid }, what => 'a read on the replica'),
   'reads go to a replica again');
is_deeply(row0(query($s->{sock}, 'SELECT v, DATABASE() FROM rws_which')),
          [ 'db2', 'rws_db2' ], 'the replica reads rws_db2, as the primary');

# a USE the router could not follow: the session stays on the primary
my $m = raw_session($t->port(0), db => 'test', caps => 0x30000);
query($m->{sock}, 'SELECT 1');
ok(query_all($m->{sock}, 'DO 1; USE rws_db2')->{ok}, 'DO 1; USE rws_db2');
ok(reset_connection($m)->{ok}, 'a multi-statement USE, then a reset');
my $r = row0(query($m->{sock}, 'SELECT v, @@server_id FROM rws_which'));
is($r ? $r->[0] : undef, 'db2', 'the read is in rws_db2');
is($r ? $r->[1] : undef, $pid, 'on the primary');
