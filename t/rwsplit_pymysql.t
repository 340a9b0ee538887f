#!/usr/bin/perl

# readwritesplit with PyMySQL (issue 9: what depends on the client library
# is tested with the real library; PyMySQL is the protocol written again
# in Python), the client in t/clients/rwsplit_pymysql.py.  Plain queries,
# COM_INIT_DB (select_db) and COM_PING, a transaction, read your own
# writes with the replica's SQL thread stopped, a CALL returning two
# result sets.  Which server answered is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');
# Debian's python3 first: another one on the PATH (pyenv...) lacks the
# Debian module
my ($py) = grep { system("$_ -c 'import pymysql' 2>/dev/null") == 0 }
    grep { -x } '/usr/bin/python3',
    eval { Sluice::Test::find_bin('python3') } // ();
$t->need($py, 'no python3 with pymysql (contrib/deps.sh installs '
         . 'python3-pymysql)');

# whatever happens, the replica replicates at the end
my $restore = 0;
END { eval { $t->replica_dbh->do('START SLAVE SQL_THREAD') } if $restore }

my ($pid, $rid) = $t->run_rwsplit(plan => 11);
my $p = $t->primary_dbh;
my $r = $t->replica_dbh;
isnt($pid, $rid, 'the primary and the replica have their own server_id');
$p->do('CREATE DATABASE IF NOT EXISTS rws_py');
$p->do('CREATE OR REPLACE TABLE test.rws_py (id INT PRIMARY KEY)');
$p->do('CREATE OR REPLACE PROCEDURE test.rws_two() BEGIN '
       . 'SELECT 1 AS a, @@server_id AS s; SELECT 2 AS b, 3 AS c; END');
Sluice::Test::wait_for(sub { $r->selectrow_array(q{SELECT COUNT(*) FROM
    information_schema.routines WHERE routine_name = 'rws_two'}) },
    what => 'the procedure on the replica');

# the replica stays behind: only the proxy's routing can show the client
# its write
$restore = 1;
$r->do('STOP SLAVE SQL_THREAD');
my ($rc, $out, $err) = $t->run_client(timeout => 25, cmd => [
    $py, "$FindBin::Bin/clients/rwsplit_pymysql.py", $t->port(0), 'rws_py',
    43, 'rws_py' ]);
$r->do('START SLAVE SQL_THREAD');
$restore = 0;
my %r = map { /^(\w+) (.*)$/ ? ($1, $2) : () } split /\n/, $out;

is($rc, 0, 'the PyMySQL client ran to its end') or diag("$out\n$err");
is($r{noautocommit}, $pid, "PyMySQL's default autocommit=False: its "
   . 'SET AUTOCOMMIT = 0 sends every read to the primary');
is($r{select}, "$rid 7", 'autocommit: a SELECT with a parameter runs on '
   . 'the replica');
is($r{select_db}, "rws_py $rid", 'select_db() (COM_INIT_DB) reaches the '
   . 'replica too');
is($r{ping}, $rid, 'ping() (COM_PING), then a read on the replica');
is($r{transaction}, $pid, 'begin(): a SELECT in the transaction runs on '
   . 'the primary');
is($r{after_commit}, $rid, 'after commit() reads go to the replica again');
# PyMySQL does not negotiate CLIENT_SESSION_TRACK: the proxy learns no
# GTID and keeps the session's reads on the primary once it wrote
is($r{write_read}, '1 1', 'INSERT, then SELECT sees the row although the '
   . "replica's SQL thread is stopped");
is($r{call}, "1,$pid 2,3", 'CALL with two result sets: both, from the '
   . 'primary');
is($r{after_call}, 5, 'and the session goes on after its final OK');
