#!/usr/bin/perl

# The harness itself: the sandbox's primary takes writes, they reach the
# replica, the replica is read-only, and the test accounts log in on both.
# Needs no sluice binary.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->plan(23);

my $p = $t->primary_dbh;
my $r = $t->replica_dbh;
ok($p && $r, 'root reaches both servers over their sockets');

is($p->selectrow_array('SELECT @@server_id'), 1, 'primary server_id 1');
is($r->selectrow_array('SELECT @@server_id'), 2, 'replica server_id 2');
is($p->selectrow_array('SELECT @@read_only'), 0, 'primary is writable');
is($r->selectrow_array('SELECT @@read_only'), 1, 'replica is read_only');

my $st = $r->selectrow_hashref('SHOW SLAVE STATUS');
is($st->{Slave_IO_Running}, 'Yes', 'replica IO thread runs');
is($st->{Slave_SQL_Running}, 'Yes', 'replica SQL thread runs');
is($st->{Master_Port}, $t->primary_port, 'replica follows the primary');

# a table per process: test files may share the sandbox and run in parallel
my $table = 'sandbox_' . $$;
$p->do("CREATE TABLE $table (id INT PRIMARY KEY, v VARCHAR(32))");
$p->do("INSERT INTO $table VALUES (1, 'written on the primary')");
# the table itself may not be there yet: that is an error, so eval
my $v = wait_for(sub {
    eval { $r->selectrow_array("SELECT v FROM $table WHERE id = 1") }
}, what => 'the row to reach the replica');
is($v, 'written on the primary', 'a row written on the primary replicates');

# app/secret over TCP, as sluice and the tests will use it
for my $server (qw(primary replica)) {
    my $port = $server eq 'primary' ? $t->primary_port : $t->replica_port;
    my $dbh = $t->dbh(port => $port);
    ok($dbh, "app logs in on the $server") or diag($DBI::errstr);
    is($dbh && $dbh->selectrow_array("SELECT v FROM $table"),
       'written on the primary', "app reads test.$table on the $server");
}

my $app = $t->dbh(port => $t->primary_port);
ok($app->do("INSERT INTO $table VALUES (2, 'by app')"),
   'app writes on the primary');
my $app_r = $t->dbh(port => $t->replica_port);
ok(!$app_r->do("INSERT INTO $table VALUES (3, 'on the replica')"),
   'app cannot write on the replica');
like($app_r->errstr, qr/read-only/, 'because it is read-only');
ok(!$t->dbh(port => $t->primary_port, password => 'wrong'),
   'a wrong password is refused');

my ($rc, $out, $err) = $t->mysql_cli(port => $t->replica_port,
    sql => 'SELECT CURRENT_USER(), @@server_id');
is($rc, 0, 'mariadb client runs') or diag($err);
is($out, "app\@%\t2\n", 'mariadb client logs in on the replica as app');

my $mon = $t->dbh(port => $t->replica_port, user => 'monitor',
                  password => 'monitor', database => undef);
my $ms = $mon && $mon->selectrow_hashref('SHOW SLAVE STATUS');
is($ms && $ms->{Slave_SQL_Running}, 'Yes',
   'monitor reads the replica status');

# the harness
my %ports = map { $t->port($_) => 1 } 0 .. 9;
is(scalar keys %ports, 10, 'ten distinct test ports');
$t->write_file_expand('x.conf', "a %%PRIMARY%% b %%PORT_3%% c %%TESTDIR%%\n");
is($t->read_file('x.conf'),
   'a 127.0.0.1:' . $t->primary_port . ' b ' . $t->port(3)
       . ' c ' . $t->testdir . "\n", 'placeholders expand');
ok(!wait_for(sub { 0 }, timeout => 0.2), 'wait_for gives up at the deadline');

$p->do("DROP TABLE $table");
