#!/usr/bin/perl

# Large data through readconn, byte for byte: a 100 000-row result, a
# 20 MiB blob both ways (text and binary protocol), and messages of
# 16 MiB - 2, 16 MiB - 1 and just over 16 MiB payload in each direction,
# the sizes where the protocol splits a message into packets.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Digest::MD5 qw(md5_hex);
use Digest::SHA qw(sha1_hex);
use Test::More;
use Sluice::Test;

use constant MAX_PAYLOAD => 0xffffff;

my $t = Sluice::Test->new;
$t->has('readconn');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
}
EOF
$t->run;
$t->plan(22);

my $rows = $t->name . '_rows';
my $blobs = $t->name . '_blobs';
my $p = $t->primary_dbh;
$p->do("CREATE OR REPLACE TABLE $rows (id INT PRIMARY KEY, v CHAR(32)) "
    . 'ENGINE=InnoDB');
$p->do("INSERT INTO $rows SELECT seq, MD5(seq) FROM seq_1_to_100000");
$p->do("CREATE OR REPLACE TABLE $blobs (id INT PRIMARY KEY, b LONGBLOB)");

my $dbh = $t->dbh(mariadb_read_timeout => 120, mariadb_write_timeout => 120);
ok($dbh, 'a session through sluice') or diag($DBI::errstr);

# --- 100 000 rows ------------------------------------------------------------

my $sth = $dbh->prepare("SELECT id, v FROM $rows ORDER BY id");
ok($sth && $sth->execute, '100 000 rows selected');
my ($n, $sum, $bad) = (0, 0, 0);
while (my $r = $sth && $sth->fetchrow_arrayref) {
    $n++;
    $sum += $r->[0];
    $bad++ if $r->[1] ne md5_hex($r->[0]);
}
is($n, 100_000, 'all of them arrive');
is($sum, 100_000 * 100_001 / 2, 'the sum of the ids is right');
is($bad, 0, 'every row carries its own MD5');

# --- a 20 MiB blob -----------------------------------------------------------

my $blob = random_bytes(20 << 20);
my $sha = sha1_hex($blob);

# text protocol: the driver escapes the blob into a 20 MiB COM_QUERY
$sth = $dbh->prepare("INSERT INTO $blobs VALUES (1, ?)");
$sth->bind_param(1, $blob, DBI::SQL_BLOB());
ok($sth->execute, '20 MiB blob inserted through sluice (COM_QUERY)')
    or diag($dbh->errstr);
is($p->selectrow_array("SELECT SHA1(b) FROM $blobs WHERE id = 1"), $sha,
   'the server has it byte for byte');
my ($back) = $dbh->selectrow_array("SELECT b FROM $blobs WHERE id = 1");
is(length($back // ''), length $blob, 'read back at full length');
is(sha1_hex($back // ''), $sha, 'and byte for byte');

# binary protocol: COM_STMT_EXECUTE, and the row comes back binary
my $ps = $t->dbh(mariadb_server_prepare => 1, mariadb_read_timeout => 120,
                 mariadb_write_timeout => 120);
$sth = $ps->prepare("INSERT INTO $blobs VALUES (2, ?)");
$sth->bind_param(1, $blob, DBI::SQL_BLOB());
ok($sth->execute, '20 MiB blob inserted with a prepared statement')
    or diag($ps->errstr);
is($p->selectrow_array("SELECT SHA1(b) FROM $blobs WHERE id = 2"), $sha,
   'the server has it byte for byte');
($back) = $ps->selectrow_array("SELECT b FROM $blobs WHERE id = ?",
                               undef, 2);
is(sha1_hex($back // ''), $sha, 'read back with a prepared statement');
undef $back;
undef $ps;

# --- around 16 MiB: one packet, a full one and an empty one, two packets -----

# Client to server: "SET @s = '...'" as a COM_QUERY of exactly $payload
# bytes (the command byte, 10 bytes of SQL, the string, the quote).
my $text = join '', map { md5_hex($_) } 1 .. (MAX_PAYLOAD + 200) / 32 + 1;
my $s;
for my $payload (MAX_PAYLOAD - 1, MAX_PAYLOAD, MAX_PAYLOAD + 101) {
    my $len = $payload - 12;
    $s = substr $text, 0, $len;
    ok($dbh->do("SET \@s = '$s'"),
       "a COM_QUERY of $payload bytes of payload passes")
        or diag($dbh->errstr);
    is(join(',', $dbh->selectrow_array('SELECT LENGTH(@s), SHA1(@s)')),
       "$len," . sha1_hex($s), 'and reaches the server intact');
}

# Server to client: a row of one string of $len bytes, behind its length
# (4 bytes below 16 MiB, 9 above: that row starts with 0xfe).
for my $payload (MAX_PAYLOAD - 1, MAX_PAYLOAD, MAX_PAYLOAD + 101) {
    my $len = $payload - ($payload - 4 < 1 << 24 ? 4 : 9);
    my ($v) = $dbh->selectrow_array(
        'SELECT LEFT(CONCAT(@s, @s), ?)', undef, $len);
    my $want = substr $s x 2, 0, $len;
    ok(defined $v && length $v == $len && $v eq $want,
       "a row of $payload bytes of payload arrives intact")
        or diag(defined $v ? 'got ' . length($v) . " bytes, want $len"
                           : 'error: ' . ($dbh->errstr // 'none'));
}

is($dbh->selectrow_array('SELECT 7'), 7,
   'the session is still in step afterwards');

$p->do("DROP TABLE $rows, $blobs");


sub random_bytes {
    my ($n) = @_;
    open(my $fh, '<:raw', '/dev/urandom') or die "/dev/urandom: $!\n";
    my $got = read($fh, my $buf, $n);
    die "short read from /dev/urandom\n" unless $got && $got == $n;
    return $buf;
}
