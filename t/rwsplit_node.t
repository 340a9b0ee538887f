#!/usr/bin/perl

# readwritesplit with node's mysql2 (issue 9: what depends on the client
# library is tested with the real library), the client in
# t/clients/rwsplit_node.js, mysql2 installed by `npm ci` from
# t/clients/package-lock.json into the test directory.  execute()
# (server-side prepared) SELECT on the replica and INSERT on the primary,
# a CALL returning two result sets through query(), changeUser().  Which
# server answered is told by @@server_id.
#
# Needs the npm registry: without it the test fails (skips with
# SLUICE_TEST_ALLOW_SKIP=1).

use strict;
use warnings;

use File::Copy qw(copy);
use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');
my ($node, $npm) = map { scalar eval { Sluice::Test::find_bin($_) } }
    qw(node npm);
$t->need($node && $npm, 'no node or npm (contrib/deps.sh installs nodejs '
         . 'npm)');

# mysql2 at the version of the lock file, in the test directory
my $dir = $t->testdir . '/node';
mkdir $dir or die "$dir: $!\n";
copy("$FindBin::Bin/clients/$_", "$dir/$_") or die "$_: $!\n"
    for qw(package.json package-lock.json);
my ($rc, $out, $err) = $t->run_client(timeout => 20, chdir => $dir,
    cmd => [ $npm, 'ci', '--no-audit', '--no-fund', '--ignore-scripts' ]);
$t->need($rc == 0, "npm ci failed (no npm registry?): $err");

my $other = $t->name . '_o';
$t->server_user($other, 'o-pw');

my ($pid, $rid) = $t->run_rwsplit(users => { $other => 'o-pw' },
                                  plan => 9);
my $p = $t->primary_dbh;
isnt($pid, $rid, 'the primary and the replica have their own server_id');
$p->do('CREATE OR REPLACE TABLE test.rws_node (id INT PRIMARY KEY)');
$p->do('CREATE OR REPLACE PROCEDURE test.rws_two() BEGIN '
       . 'SELECT 1 AS a, @@server_id AS s; SELECT 2 AS b, 3 AS c; END');
Sluice::Test::wait_for(sub { $t->replica_dbh->selectrow_array(q{SELECT
    COUNT(*) FROM information_schema.routines WHERE routine_name =
    'rws_two'}) }, what => 'the procedure on the replica');

($rc, $out, $err) = $t->run_client(timeout => 25,
    env => { NODE_PATH => "$dir/node_modules" },
    cmd => [ $node, "$FindBin::Bin/clients/rwsplit_node.js", $t->port(0),
             'rws_node', 45, $rid, $other, 'o-pw' ]);
my %r = map { /^(\w+) (.*)$/ ? ($1, $2) : () } split /\n/, $out;
is($rc, 0, 'the mysql2 client ran to its end') or diag("$out\n$err");
like($r{select}, qr/^$rid 7 /, 'execute(): a prepared SELECT runs on the '
   . 'replica once prepared there') or diag($out);
note("execute() SELECT: $r{select}");
is($r{insert}, 1, 'execute(): a prepared INSERT');
is(scalar $p->selectrow_array('SELECT COUNT(*) FROM rws_node WHERE id = 45'),
   1, 'which ran on the primary');
is($r{call}, "1,$pid 2,3", 'query(): CALL with two result sets, both, from '
   . 'the primary');
is($r{after_call}, 5, 'then execute() again');
is($r{change_user}, "$other\@% $pid", 'changeUser(): the new user');
is($r{after_change_user}, 1, "the new user's prepared read sees the row");
