#!/usr/bin/perl

# auth passthrough: the server authenticates, so an account created on the
# server after sluice started, and unknown to sluice's config, logs in;
# a wrong password gets the server's own refusal; a client starting with
# caching_sha2_password is switched by the server; the default database
# reaches the backend.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
plan skip_all => 'no readconn' unless $t->has_module('readconn');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
mysql {
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        readconn_role primary;
        auth passthrough;
        upstream cluster;
    }
}
EOF
$t->run;
$t->plan(17);

# The account is made now: sluice has never heard of it.
my $user = 'pt_' . $t->name;
my $p = $t->primary_dbh;
$p->do("CREATE OR REPLACE USER '$user'\@'%' IDENTIFIED BY 'x'");
$p->do("GRANT SELECT ON test.* TO '$user'\@'%'");
my $table = $t->name . '_t';
$p->do("CREATE OR REPLACE TABLE $table (id INT PRIMARY KEY, v VARCHAR(16))");
$p->do("INSERT INTO $table VALUES (1, 'passed through')");

my $dbh = $t->dbh(user => $user, password => 'x');
ok($dbh, 'an account created after sluice started logs in')
    or diag($DBI::errstr);
is($dbh && $dbh->selectrow_array('SELECT CURRENT_USER()'), "$user\@%",
   'as itself');
is($dbh && $dbh->selectrow_array("SELECT v FROM $table WHERE id = 1"),
   'passed through', 'and runs a query');
is($dbh && $dbh->selectrow_array('SELECT @@server_id'), 1,
   'on the primary (readconn_role primary)');
is($dbh && $dbh->selectrow_array('SELECT DATABASE()'), 'test',
   'the default database reached the backend');
undef $dbh;

my $nodb = $t->dbh(user => $user, password => 'x', database => undef);
ok($nodb && !defined $nodb->selectrow_array('SELECT DATABASE()'),
   'and without one there is none');
undef $nodb;

ok(!$t->dbh(user => $user, password => 'wrong'),
   'a wrong password is refused');
is($DBI::err, 1045, 'with ERR 1045');
is($DBI::errstr, "Access denied for user '$user'\@'127.0.0.1' "
   . '(using password: YES)', "the server's own message");
ok(wait_for(sub {
    $t->grep_log(qr/backend refused the login.*user: "\Q$user\E"/)
}, what => 'the refusal in the log'), 'sluice logs the refusal');

my ($rc, $out, $err) = $t->mysql_cli(user => $user, password => 'x',
    sql => 'SELECT CURRENT_USER(), DATABASE()',
    args => [ '--default-auth=caching_sha2_password' ]);
is($rc, 0, 'a client starting with caching_sha2_password logs in')
    or diag($err);
is($out, "$user\@%\ttest\n", 'as itself, in its database');

($rc, $out, $err) = $t->mysql_cli(user => $user, password => 'x',
    sql => 'SELECT DATABASE()', database => 'mysql');
isnt($rc, 0, 'a database the account may not use is refused');
like($err, qr/^ERROR 1044 \(42000\): Access denied for user '\Q$user\E'/,
     "with the server's ERR 1044");

# app too has no user block in this config
($rc, $out, $err) = $t->mysql_cli(sql => 'SELECT CURRENT_USER()');
is($out, "app\@%\n", 'app logs in with no user block in the config')
    or diag($err);

# the server decides, so a password change there takes effect at once
$p->do("SET PASSWORD FOR '$user'\@'%' = PASSWORD('y')");
ok(!$t->dbh(user => $user, password => 'x') && $DBI::err == 1045,
   'after a password change on the server, the old one is refused');
ok($t->dbh(user => $user, password => 'y'), 'and the new one works')
    or diag($DBI::errstr);

$p->do("DROP TABLE $table");
$p->do("DROP USER '$user'\@'%'");
