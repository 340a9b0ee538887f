#!/usr/bin/perl

# readwritesplit with a real client library other than libmariadb: PHP's
# mysqli (mysqlnd, the protocol written again in C by PHP).  Server-side
# prepared statements (a SELECT on the replica, an INSERT on the
# primary), a stored procedure returning two result sets called as a
# prepared statement (it must complete, both result sets and the final
# OK), and change_user().  Which server answered is told by @@server_id.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');
my $php = eval { Sluice::Test::find_bin('php') };
$t->need($php && system($php, '-r',
        'exit(extension_loaded("mysqli") ? 0 : 1);') == 0,
    'no php (contrib/deps.sh installs php-cli php-mysql)');
my $other = $t->name . '_o';
$t->server_user($other, 'o-pw');

my ($pid, $rid) = $t->run_rwsplit(users => { $other => 'o-pw' },
                                  plan => 7);
my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE test.rws_php (id INT PRIMARY KEY)');
$p->do('CREATE OR REPLACE PROCEDURE test.rws_two() '
       . 'BEGIN SELECT 1 AS a; SELECT 2 AS b, 3 AS c; END');
Sluice::Test::wait_for(sub { $t->replica_dbh->selectrow_array(q{SELECT
    COUNT(*) FROM information_schema.routines WHERE routine_name =
    'rws_two'}) }, what => 'the procedure on the replica');

$t->write_file('client.php', <<'PHP');
<?php
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
$port = (int) $argv[1];
$db = new mysqli('127.0.0.1', 'app', 'secret', 'test', $port);
/* a read first: the replica backend is open and logged in before the
   PREPARE, so its copy there is answered within the three EXECUTEs */
$db->query('SELECT 1')->free();

$st = $db->prepare('SELECT @@server_id, ?');
$x = 7;
$st->bind_param('i', $x);
for ($i = 0; $i < 3; $i++) {
    $st->execute();
    $st->bind_result($sid, $echo);
    $st->fetch();
    $st->free_result();
}
echo "select $sid $echo\n";

$ins = $db->prepare('INSERT INTO rws_php VALUES (?)');
$id = 41;
$ins->bind_param('i', $id);
$ins->execute();
echo "insert {$ins->affected_rows}\n";

$call = $db->prepare('CALL rws_two()');
$call->execute();
$sets = array();
do {
    if ($res = $call->get_result()) {
        $sets[] = implode(',', $res->fetch_row());
        $res->free();
    }
} while ($call->more_results() && $call->next_result());
echo 'call ', implode(' ', $sets), "\n";
$call->close();
echo 'after ', $db->query('SELECT 5')->fetch_row()[0], "\n";

$db->change_user($argv[2], $argv[3], 'test');
echo 'user ', $db->query('SELECT CURRENT_USER()')->fetch_row()[0], "\n";
PHP
my @out = `$php @{[ $t->testdir ]}/client.php @{[ $t->port(0) ]} $other o-pw 2>&1`;
chomp @out;
my %r = map { /^(\w+) (.*)$/ ? ($1, $2) : () } @out;
is($?, 0, 'the PHP client ran to its end') or diag(join "\n", @out);
is($r{select}, "$rid 7",
   'a prepared SELECT, executed three times, runs on the replica');
is($r{insert}, 1, 'a prepared INSERT');
is(scalar $p->selectrow_array('SELECT COUNT(*) FROM rws_php WHERE id = 41'),
   1, 'which ran on the primary');
is($r{call}, '1 2,3', 'CALL of a procedure with two result sets, as a '
   . 'prepared statement: both result sets');
is($r{after}, 5, 'and the session goes on after its final OK');
is($r{user}, "$other\@%", 'mysqli change_user(): the new user');
