#!/usr/bin/perl

# readwritesplit with Go's database/sql and go-sql-driver/mysql (issue 9:
# what depends on the client library is tested with the real library),
# the client in t/clients/rwsplit_go.go, built offline against Debian's
# copy of the driver.  interpolateParams=false, so a query with arguments
# is prepared on the server: a prepared SELECT on the replica, a
# transaction on the primary, one-shot prepared SELECTs on the replica
# (database/sql's default for a query with arguments), queries cancelled
# by their context (the
# driver closes the connection under a running query: the proxy must go
# on), a prepared INSERT on the primary, and its row read back.  Which
# server answered is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $gopath = '/usr/share/gocode';

my $t = Sluice::Test->new;
$t->has('readwritesplit');
my $go = eval { Sluice::Test::find_bin('go') };
$t->need($go && -d "$gopath/src/github.com/go-sql-driver/mysql",
         'no go or no go-sql-driver (contrib/deps.sh installs golang-go '
         . 'golang-github-go-sql-driver-mysql-dev)');

my ($pid, $rid) = $t->run_rwsplit(plan => 15);

# GOPATH mode, no module download: Debian's packaged driver only
my $bin = $t->testdir . '/rwsplit_go';
my ($rc, $out, $err) = $t->run_client(timeout => 60, cmd => [
    $go, 'build', '-o', $bin, "$FindBin::Bin/clients/rwsplit_go.go" ],
    env => { GO111MODULE => 'off', GOPATH => $gopath, GOFLAGS => '',
             GOCACHE => $t->testdir . '/gocache', GOPROXY => 'off' });
is($rc, 0, 'the Go client builds offline') or diag("$out\n$err");

my $p = $t->primary_dbh;
isnt($pid, $rid, 'the primary and the replica have their own server_id');
$p->do('CREATE OR REPLACE TABLE test.rws_go (id INT PRIMARY KEY)');

($rc, $out, $err) = $t->run_client(timeout => 25,
    cmd => [ $bin, $t->port(0), 'rws_go', 44, $rid ]);
my %r = map { /^(\w+) (.*)$/ ? ($1, $2) : () } split /\n/, $out;
is($rc, 0, 'the Go client ran to its end') or diag("$out\n$err");
like($r{select}, qr/^$rid 7 /, 'a statement prepared once, executed '
   . 'again, runs on the replica once prepared there') or diag($out);
note("prepared SELECT: $r{select}");
# database/sql's Query with arguments sends PREPARE, one EXECUTE with the
# types, CLOSE: the EXECUTE waits for the copy of the PREPARE already on
# its way to the replica
cmp_ok($r{oneshot} // 0, '>=', 15, 'one-shot prepared SELECTs (Query with '
       . 'arguments) run on the replica, at least 15 of 20') or diag($out);
is($r{transaction}, "$pid 1", 'a prepared SELECT in a transaction runs on '
   . 'the primary');
is($r{after_commit}, "$rid 2", 'after the commit, the prepared SELECT runs '
   . 'on the replica again');
is($r{cancel_query}, 'cancelled', 'a query cancelled by its context');
is($r{after_cancel_query}, "$rid 3", 'then a new connection works');
is($r{cancel_prepared}, 'cancelled', 'a prepared EXECUTE cancelled by its '
   . 'context');
is($r{after_cancel_prepared}, "$rid 4", 'then a new connection works');
is($r{insert}, 1, 'a prepared INSERT');
is(scalar $p->selectrow_array('SELECT COUNT(*) FROM rws_go WHERE id = 44'),
   1, 'which ran on the primary');
is($r{read_back}, "1 $pid", 'the row read back, from the primary since '
   . 'the session wrote');

my $dbh = $t->dbh;
is($dbh && $dbh->selectrow_array('SELECT 1 + 1'), 2,
   'after the Go client, the proxy takes another client');
$dbh->disconnect if $dbh;
