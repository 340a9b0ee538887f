#!/usr/bin/perl

# Regression: under auth passthrough, COM_CHANGE_USER goes to the server
# as it is, and the cache went on keying the session's reads by the user,
# default database and character set of the login.  After a change to a
# user with no grant on a table, a read of it was served the first
# user's cached row instead of the server's ERR 1142; after a change to
# another database, the same text was served the login database's row;
# after a change to latin1, the utf8mb4 bytes.  What must hold: after a
# COM_CHANGE_USER, a read is answered as the server answers the new
# user, in the new database, in the new character set.  Whether the
# server answered is told by its Com_select.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query change_user);

my $t = Sluice::Test->new;
$t->has('cache');

my $name = $t->name;
my ($u1, $u2) = ("${name}_u1", "${name}_u2");
my ($secret, $tab, $pub, $cs) = map { "${name}_$_" } qw(secret t pub cs);
my $db2 = "${name}_db2";

my $p = $t->primary_dbh;
$p->do("CREATE OR REPLACE TABLE test.$secret (id INT PRIMARY KEY, "
       . 's VARCHAR(16))');
$p->do("INSERT INTO test.$secret VALUES (1, 'for u1 only')");
$p->do("CREATE OR REPLACE TABLE test.$pub (id INT)");
$p->do("CREATE OR REPLACE TABLE test.$tab (id INT PRIMARY KEY, "
       . 'v VARCHAR(16))');
$p->do("INSERT INTO test.$tab VALUES (1, 'test')");
$p->do("CREATE DATABASE IF NOT EXISTS $db2");
$p->do("CREATE OR REPLACE TABLE $db2.$tab (id INT PRIMARY KEY, "
       . 'v VARCHAR(16))');
$p->do("INSERT INTO $db2.$tab VALUES (1, 'db2')");
$p->do("CREATE OR REPLACE TABLE test.$cs (id INT PRIMARY KEY, "
       . 'c VARCHAR(16) CHARACTER SET utf8mb4)');
$p->do("INSERT INTO test.$cs VALUES (1, _utf8mb4 x'c3a9')");       # é
# u1 reads test (the secret too) and db2; u2 only the table pub of test
$t->server_user($u1, 'pw-1');
$p->do("GRANT SELECT ON $db2.* TO '$u1'\@'%'");
$t->server_user($u2, 'pw-2');
$p->do("REVOKE SELECT ON test.* FROM '$u2'\@'%'");
$p->do("GRANT SELECT ON test.$pub TO '$u2'\@'%'");
END { eval { my $d = $t->primary_dbh;
             $d->do("DROP USER IF EXISTS '$_'\@'%'") for $u1, $u2;
             $d->do("DROP TABLE IF EXISTS test.$secret, test.$pub, "
                    . "test.$tab, test.$cs");
             $d->do("DROP DATABASE IF EXISTS $db2") } if $t }

$t->run_cache(plan => 18, server => <<'EOS');
        auth passthrough;
EOS

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

sub u1_session {
    my (%o) = @_;
    my $s = raw_session($o{port} // $t->port(0), user => $u1,
                        password => 'pw-1', db => 'test', %o);
    return $s;
}

sub col0 {
    my ($r) = @_;
    return $r && $r->{rows} && @{ $r->{rows} } ? $r->{rows}[0][0] : undef;
}

# --- the user ------------------------------------------------------------------

my $qs = "SELECT s FROM $secret WHERE id = 1";
my $s = u1_session();
ok($s, "$u1 logs in through the proxy (passthrough)");
is(col0(query($s->{sock}, $qs)), 'for u1 only', "$u1 reads the secret");
is(served(sub { query($s->{sock}, $qs) }), 0, 'again: served from the '
   . 'cache');
my $cu = change_user($s, user => $u2, password => 'pw-2', db => 'test');
ok($cu && $cu->{ok}, "COM_CHANGE_USER to $u2")
    or diag(explain($cu));
my $r = query($s->{sock}, $qs);
is($r && $r->{err} && $r->{err}{code}, 1142, "$u2 reads the secret: the "
   . 'server\'s ERR 1142, not the row')
    or diag(explain($r));
close $s->{sock};

# --- the database ----------------------------------------------------------

my $qt = "SELECT v FROM $tab WHERE id = 1";
$s = u1_session();
is(col0(query($s->{sock}, $qt)), 'test', "$u1 in test: test's row");
is(served(sub { query($s->{sock}, $qt) }), 0, 'again: served from the '
   . 'cache');
$cu = change_user($s, user => $u1, password => 'pw-1', db => $db2);
ok($cu && $cu->{ok}, "COM_CHANGE_USER to $u1 in $db2")
    or diag(explain($cu));
is(col0(query($s->{sock}, 'SELECT DATABASE()')), $db2, 'the server says '
   . "the database is $db2");
is(col0(query($s->{sock}, $qt)), 'db2', 'the same text gives db2\'s row');
close $s->{sock};

# --- the character set -------------------------------------------------------

my $qc = "SELECT c FROM $cs WHERE id = 1";
my $direct = u1_session(port => $t->primary_port, charset => 8);
my $latin1 = col0(query($direct->{sock}, $qc));
is($latin1, "\xe9", 'directly, logged in with latin1 (8): the server '
   . 'sends é as one latin1 byte');
close $direct->{sock};
$s = u1_session(charset => 45);
is(col0(query($s->{sock}, $qc)), "\xc3\xa9", "$u1 with utf8mb4 (45): "
   . 'é in two bytes');
is(served(sub { query($s->{sock}, $qc) }), 0, 'again: served from the '
   . 'cache');
$cu = change_user($s, user => $u1, password => 'pw-1', db => 'test',
                  charset => 8);
ok($cu && $cu->{ok}, 'COM_CHANGE_USER with latin1 (8)')
    or diag(explain($cu));
is(col0(query($s->{sock}, 'SELECT @@character_set_results')), 'latin1',
   'the server says the results are latin1');
my $got = col0(query($s->{sock}, $qc));
is(unpack('H*', $got // ''), unpack('H*', $latin1), 'the same text gives '
   . 'the latin1 bytes the server sends');
close $s->{sock};

# --- a COM_CHANGE_USER sluice cannot read ----------------------------------

$s = u1_session();
Sluice::Wire::send_packet($s->{sock}, 0, "\x11no-terminator");
my $err = Sluice::Wire::read_err($s->{sock});
is($err && $err->{code}, 1043, 'a malformed COM_CHANGE_USER: ERR 1043 (bad '
   . 'handshake), the session ends');
ok(Sluice::Wire::wait_eof($s->{sock}, 5), 'and the connection is closed');
$t->allow_log(qr/Bad COM_CHANGE_USER/);
