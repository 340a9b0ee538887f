#!/usr/bin/perl

# Regression (issue 19, item 7): a write inside START TRANSACTION READ
# ONLY, which readwritesplit runs on a replica, got the replica's ERR 1290
# (read-only server) instead of the 1792 the primary answers.  Now the
# router answers it as the primary would, for a text and a prepared
# statement, and the transaction goes on.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my ($pid, $rid) = $t->run_rwsplit(plan => 9);
my $P = $t->primary_dbh;
$P->do('CREATE OR REPLACE TABLE test.rws_row (id INT PRIMARY KEY)');

# what the primary answers, directly
my $direct = $t->dbh(port => $t->primary_port);
$direct->do('START TRANSACTION READ ONLY');
ok(!$direct->do('INSERT INTO rws_row VALUES (1)'), 'directly: refused');
my ($code, $state) = ($direct->err, $direct->state);
is("$code $state", '1792 25006', 'directly: ERR 1792 (25006)');
$direct->do('COMMIT');

for my $prep (0, 1) {
    my $how = $prep ? 'prepared' : 'text';
    my $d = $t->dbh(mariadb_server_prepare => $prep);
    # the replica backend open first (else the transaction may start on
    # the primary, which answers 1792 itself)
    wait_for(sub { ($d->selectrow_array('SELECT @@server_id'))[0] == $rid },
             what => 'a read on the replica');
    ok($d->do('START TRANSACTION READ ONLY'), "$how: START TRANSACTION READ ONLY");
    ok(!$d->do('INSERT INTO rws_row VALUES (2)')
       && $d->err == 1792 && $d->state eq '25006',
       "$how: an INSERT in it gets ERR 1792 (25006), as from the primary")
        or diag($d->err, ' ', $d->state, ' ', $d->errstr);
    is(($d->selectrow_array('SELECT @@server_id'))[0], $rid,
       "$how: the transaction goes on, on the replica");
    $d->do('COMMIT');
}
is($P->selectrow_array('SELECT COUNT(*) FROM rws_row'), 0, 'nothing written');
