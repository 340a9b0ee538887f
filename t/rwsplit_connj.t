#!/usr/bin/perl

# readwritesplit with MariaDB Connector/J (issue 9: what depends on the
# client library is tested with the real library), the client in
# t/clients/RwsplitConnJ.java run as a single source file.  With
# useServerPrepStmts=true (COM_STMT_PREPARE/EXECUTE) and without (the
# driver's own client-side prepares, COM_QUERY): a prepared SELECT on the
# replica, a prepared INSERT on the primary, a stored procedure returning
# two result sets called as a CallableStatement and as a PreparedStatement
# `CALL p()`, read to the end with getMoreResults() -- a proxy that loses
# track of the final OK hangs here -- and a statement after it.  Which
# server answered is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $jar = '/usr/share/java/mariadb-java-client.jar';

my $t = Sluice::Test->new;
$t->has('readwritesplit');
my $java = eval { Sluice::Test::find_bin('java') };
$t->need($java && -r $jar, 'no java or no Connector/J (contrib/deps.sh '
         . 'installs default-jdk-headless libmariadb-java)');

my ($pid, $rid) = $t->run_rwsplit(plan => 17);
my $p = $t->primary_dbh;
isnt($pid, $rid, 'the primary and the replica have their own server_id');
$p->do('CREATE OR REPLACE TABLE test.rws_connj (id INT PRIMARY KEY)');
$p->do('CREATE OR REPLACE PROCEDURE test.rws_two() BEGIN '
       . 'SELECT 1 AS a, @@server_id AS s; SELECT 2 AS b, 3 AS c; END');
Sluice::Test::wait_for(sub { $t->replica_dbh->selectrow_array(q{SELECT
    COUNT(*) FROM information_schema.routines WHERE routine_name =
    'rws_two'}) }, what => 'the procedure on the replica');

my %id = (server => 41, client => 42);
for my $mode (qw(server client)) {
    my ($rc, $out, $err) = $t->run_client(timeout => 25, cmd => [
        $java, '-cp', $jar, "$FindBin::Bin/clients/RwsplitConnJ.java",
        $t->port(0), 'rws_connj', $id{$mode}, $mode ]);
    my %r = map { /^\Q$mode\E\.(\w+) (.*)$/ ? ($1, $2) : () }
        split /\n/, $out;
    my $how = $mode eq 'server' ? 'useServerPrepStmts=true'
                                : 'client-side prepares';
    is($rc, 0, "$how: the Connector/J client ran to its end")
        or diag("$out\n$err");
    is($r{select}, "$rid 9",
       "$how: a prepared SELECT, executed three times, runs on the replica");
    is($r{insert}, 1, "$how: a prepared INSERT");
    is(scalar $p->selectrow_array(
           'SELECT COUNT(*) FROM rws_connj WHERE id = ?', undef, $id{$mode}),
       1, "$how: which ran on the primary");
    is($r{callable}, "1,$pid 2,3", "$how: a CallableStatement {call p()} "
       . 'with two result sets runs on the primary: both result sets');
    is($r{after1}, 5, "$how: the session goes on after the CALL's final OK");
    is($r{call}, "1,$pid 2,3", "$how: CALL p() as a PreparedStatement, "
       . 'read to the end');
    # the session wrote, and with no monitor nor causal_reads_timeout
    # the proxy cannot know that the replica has the write: the session's
    # reads stay on the primary (docs/architecture.md, "Causal reads")
    is($r{after2}, "6 $pid", "$how: then a prepared SELECT, on the "
       . 'primary since the session wrote');
}
