#!/usr/bin/perl

# auth passthrough: the server authenticates, so an account created on the
# server after sluice started, and unknown to sluice's config, logs in;
# a wrong password gets the server's own refusal; a client starting with
# caching_sha2_password is switched by the server; the default database
# reaches the backend; the relayed greeting offers neither TLS nor
# compression, which the server's own greeting does.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Select;
use IO::Socket::INET;
use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_connect greeting_of
                    parse_greeting);

my $t = Sluice::Test->new;
$t->has('readconn');

# Port 8 is a backend this test plays itself, to offer TLS (the sandbox
# servers have no certificate, so they do not).
my $fake = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
    LocalPort => $t->port(8), Listen => 4, ReuseAddr => 1)
    or die "listen on port 8: $!\n";

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
    upstream fake { server 127.0.0.1:%%PORT_8%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        auth passthrough;
        upstream fake;
    }
}
EOF
$t->run;
$t->plan(24);

# The account is made now: sluice has never heard of it.
my $user = 'pt_' . $t->name;
$t->server_user($user, 'x');
my $p = $t->primary_dbh;
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


# --- the greeting ------------------------------------------------------------

use constant {
    CLIENT_COMPRESS => 0x20,
    CLIENT_SSL      => 0x800,
    CLIENT_ZSTD     => 0x04000000,
};
use constant CLEARED => CLIENT_COMPRESS | CLIENT_SSL | CLIENT_ZSTD;

# The same greeting with capability bits $set set.
sub set_caps {
    my ($pl, $set) = @_;
    my $off = index($pl, "\0", 1) + 1 + 4 + 8 + 1;
    my $caps = unpack('v', substr $pl, $off, 2)
             | unpack('v', substr $pl, $off + 5, 2) << 16;
    $caps |= $set;
    substr($pl, $off, 2) = pack 'v', $caps & 0xffff;
    substr($pl, $off + 5, 2) = pack 'v', $caps >> 16;
    return $pl;
}

my $server = parse_greeting(greeting_of($t->primary_port));
my $relayed = parse_greeting(greeting_of($t->port(0)));
ok($server && $relayed, 'a protocol-10 greeting from the primary and from '
   . 'sluice');
$server //= { caps => 0, version => '' };
$relayed //= { caps => 0, version => '' };
note(sprintf 'primary capabilities 0x%08x, relayed 0x%08x',
     $server->{caps}, $relayed->{caps});
ok($server->{caps} & CLIENT_COMPRESS,
   "the primary's own greeting offers compression (CLIENT_COMPRESS)");
ok(!($relayed->{caps} & CLIENT_COMPRESS), 'the relayed greeting does not');
is(sprintf('0x%08x %s', $relayed->{caps}, $relayed->{version}),
   sprintf('0x%08x %s', $server->{caps} & ~CLEARED, $server->{version}),
   "otherwise it is the primary's: same version, same other capabilities");

# The fake backend sends the primary's greeting with TLS, compression and
# zstd compression offered; sluice must relay it with those three bits
# cleared and every other byte as it was.
my $offer = set_caps(greeting_of($t->primary_port), CLEARED);
my $client = raw_connect($t->port(1));
my $pl;
if (IO::Select->new($fake)->can_read(10) and my $b = $fake->accept) {
    send_packet($b, 0, $offer);
    (undef, $pl) = read_packet($client);
    close $b;
}
close $client;
my $g = parse_greeting($pl) // { caps => CLEARED };
is(sprintf('0x%08x', $g->{caps} & CLEARED), '0x00000000',
   'a backend offering TLS and compression: the relayed greeting offers '
   . 'none of CLIENT_SSL, CLIENT_COMPRESS, CLIENT_ZSTD_COMPRESSION');
# the thread id is the proxy's session id (what KILL names, see t/kill.t)
sub thread_id { my ($g) = @_; $g =~ /\A\x0a[^\0]*\0(.{4})/s ? unpack('V', $1) : 0 }
sub no_thread_id { my ($g) = @_; $g =~ s/\A(\x0a[^\0]*\0).{4}/$1\0\0\0\0/s; $g }
ok(defined $pl && no_thread_id(set_caps($pl, CLEARED)) eq no_thread_id($offer),
   'and is otherwise byte for byte what the backend sent');
cmp_ok(thread_id($pl // ''), '>=', 0x80000000,
   "but for the thread id, which is sluice's session id");
