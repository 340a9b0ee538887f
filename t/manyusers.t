#!/usr/bin/perl

# 60 000 user blocks: the config parses (users are kept in a hash table,
# so neither the duplicate check nor a login lookup scans them), a
# duplicate at the very end is reported with its file:line and the line of
# the first one, and a client logs in as the last user of the file.
# Timing is not asserted; the quadratic parse took seconds here.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readconn');
my $dir = $t->testdir;

my $NUSERS = 60000;

# users.conf: u0 .. u59998 with a password hash each, then `app` (the
# sandbox's user) last; $extra is appended after it
sub users {
    my ($extra) = @_;
    my $s = '';
    for my $i (0 .. $NUSERS - 2) {
        $s .= sprintf qq{user u%d { password_hash "*%040X"; }\n}, $i, $i;
    }
    return $s . qq{user app { password "secret"; }\n} . ($extra // '');
}

my $MAIN = <<'EOF';
worker_processes 1;
mysql {
    include %%USERS%%;
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
}
EOF

sub main_conf {
    my ($name, $users) = @_;
    (my $c = $MAIN) =~ s/%%USERS%%/$users/;
    $t->write_file_expand($name, $c);
}

$t->plan(8);

# --- a duplicate at the end ------------------------------------------------

$t->write_file('dup-users.conf', users(qq{user u17 { password "x"; }\n}));
main_conf('dup.conf', 'dup-users.conf');
my ($rc, $out) = $t->test_config(conf => 'dup.conf');
is($rc, 1, 'a duplicate user at the end: sluice -t exits 1');
my $msg = "$dir/dup-users.conf:" . ($NUSERS + 1) . ': duplicate user "u17" '
        . "(first at $dir/dup-users.conf:18)";
like($out, qr/^sluice: \[emerg\] \Q$msg\E$/m,
     'a duplicate user at the end: names its file:line and the first one')
    or diag($out);

# --- 60 000 users --------------------------------------------------------

$t->write_file('users.conf', users());
main_conf('sluice.conf', 'users.conf');
($rc, $out) = $t->test_config;
is($rc, 0, "$NUSERS users: sluice -t exits 0") or diag($out);
like($out, qr/test is successful$/m, "$NUSERS users: test is successful");

$t->run;
my $dbh = $t->dbh;
is($dbh && $dbh->selectrow_array('SELECT 1'), 1,
   'the last user of the file logs in');
ok(!$t->dbh(password => 'wrong'), 'the last user, wrong password: refused');
is($DBI::err, 1045, 'with ERR 1045');
ok(!$t->dbh(user => 'u30000', password => 'x'),
   'a user in the middle, wrong password: refused');
