#!/usr/bin/perl

# The command layer, through the test filter (t/modules/testfilter, built
# with ./configure --with-test-modules): ordinary traffic passes a filter
# unchanged (text and binary protocol, transactions, a command larger than
# a buffer, pipelines); a filter answers a command itself, with a reply of
# 2 MB streamed through a 16 KiB buffer with correct sequence ids, or an
# ERR, and the rest of a large answered command is dropped; a filter
# pauses one session on a timer while the worker serves others, and a
# client hanging up meanwhile closes the session; the packet and done
# hooks see each response's packets, status flags and PREPARE_OK; KILL,
# COM_CHANGE_USER (a real client's change_user()) and LOAD DATA LOCAL
# INFILE work in command mode, as does auth passthrough; a reload hands a
# filtered session to the new worker, where it meets the filter again;
# and `filters` is checked at configuration time with file:line.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes ();
use Sluice::Test;
use Sluice::Wire qw(read_packet raw_login packet);

use constant ROWS => 20000;     # of 100 bytes: 2 MB through 16 KiB

my $t = Sluice::Test->new;
$t->has('testfilter', 'readconn');
my $py = '/usr/bin/python3';
$t->need(system($py, '-c', 'import MySQLdb') == 0,
         'no Python mysqlclient (contrib/deps.sh installs python3-mysqldb)');
my $other = $t->name . '_other';
$t->server_user($other, 'other-pw');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
worker_shutdown_timeout 1s;
events { worker_connections 100; }
mysql {
    buffer_size 16k;
    user app { password "secret"; }
    user $other { password "other-pw"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        filters testfilter;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        upstream cluster;
        auth passthrough;
        filters testfilter;
    }
}
EOF
$t->run;
$t->plan(58);

# A logged-in raw client (no DEPRECATE_EOF: results end with EOF).
sub login {
    my $s = raw_login($t->port(0)) or return undef;
    my (undef, $ok) = read_packet($s);
    return defined $ok && ord($ok) == 0 ? $s : undef;
}

sub query { my ($s, $sql) = @_; syswrite($s, packet(0, "\x03$sql")) }

# Packets up to and including an EOF; [seq, payload] each; undef on ERR.
sub until_eof {
    my ($s, $pkts) = @_;
    for (;;) {
        my ($seq, $pl) = read_packet($s);
        return undef if !defined $pl || ord($pl) == 0xff;
        push @$pkts, [ $seq, $pl ];
        return 1 if ord($pl) == 0xfe && length $pl < 9;
    }
}

# A text result set of one column: (values, every packet).
sub read_result {
    my ($s) = @_;
    my @pkts;
    my ($seq, $count) = read_packet($s);
    return undef unless defined $count && $count eq "\x01";
    push @pkts, [ $seq, $count ];
    until_eof($s, \@pkts) // return undef;              # the definition
    my $n = @pkts;
    until_eof($s, \@pkts) // return undef;
    my @rows = map { $_->[1] } @pkts[$n .. $#pkts - 1];
    return ([ map { lenenc_str($_) } @rows ], \@pkts);
}

sub lenenc_str {
    my ($p) = @_;
    my $c = ord $p;
    return substr($p, 1) if $c < 251;
    return substr($p, 3) if $c == 0xfc;
    return substr($p, 4) if $c == 0xfd;
    return undef;
}

sub read_err {
    my ($s) = @_;
    my (undef, $pl) = read_packet($s);
    return undef unless defined $pl && ord($pl) == 0xff;
    my ($code, $msg) = unpack 'x v x x5 a*', $pl;
    return "$code $msg";
}

sub last_seen {
    my ($s) = @_;
    query($s, '/*tf:last*/');
    my ($v) = read_result($s);
    return $v ? $v->[0] : 'no answer';
}

# --- traffic passes --------------------------------------------------------

my $dbh = $t->dbh;
ok($dbh, 'client logs in through a filtered server') or diag($DBI::errstr);
is(scalar $dbh->selectrow_array('SELECT 1 + 1'), 2, 'a query passes');
$dbh->do('CREATE OR REPLACE TABLE filter_t (id INT PRIMARY KEY, v MEDIUMTEXT)');
ok($dbh->do('INSERT INTO filter_t VALUES (1, ?)', undef, 'x' x 100_000),
   'an INSERT of 100 kB (larger than the buffer) passes')
    or diag($dbh->errstr);
is(scalar $dbh->selectrow_array('SELECT LENGTH(v) FROM filter_t'), 100_000,
   'and arrives whole');
my $sth = $dbh->prepare('SELECT ? + ?', { mariadb_server_prepare => 1 });
ok($sth && $sth->execute(2, 3), 'a server-side prepared statement runs');
is(($sth->fetchrow_array)[0], 5, 'with the right result');
$sth->finish;
$dbh->begin_work;
$dbh->do('INSERT INTO filter_t VALUES (2, "b")');
$dbh->rollback;
is(scalar $dbh->selectrow_array('SELECT COUNT(*) FROM filter_t'), 1,
   'a rolled back transaction left nothing');

# --- a filter answers ------------------------------------------------------

my $rows = $dbh->selectcol_arrayref('/*tf:rows ' . ROWS . '*/');
is(scalar @{ $rows // [] }, ROWS, 'a filter answers ' . ROWS . ' rows');
is($rows->[0], '1:' . 'x' x 98, 'first row');
is($rows->[-1], ROWS . ':' . 'x' x (100 - length(ROWS) - 1), 'last row');
is(scalar $dbh->selectrow_array('SELECT 7'), 7, 'the session goes on');

ok(!$dbh->do('/*tf:err*/'), 'a filter answers ERR');
is($dbh->err, 1105, 'with its code');
like($dbh->errstr, qr/testfilter: refused/, 'and message');

my $s = login();
ok($s, 'raw client (no DEPRECATE_EOF) logged in');
query($s, '/*tf:rows ' . ROWS . '*/');
my ($v, $pkts) = read_result($s);
is(scalar @{ $v // [] }, ROWS, 'streamed rows over the raw protocol');
my $bad = grep { $pkts->[$_][0] != ($_ + 1) % 256 } 0 .. $#$pkts;
is($bad, 0, 'sequence ids run 1, 2, ... 255, 0, 1 over ' . @$pkts
   . ' packets');

# a large command answered by the filter: the rest of it is dropped
query($s, '/*tf:err*/ SELECT "' . ('y' x 100_000) . '"');
like(read_err($s) // '', qr/^1105 /, 'a 100 kB command answered with ERR');
query($s, 'SELECT 5');
($v) = read_result($s);
is("@{ $v // [] }", '5', 'the rest of it was dropped, not sent');

# a pipeline mixing answers of the filter and of the server
syswrite($s, packet(0, "\x03SELECT 1") . packet(0, "\x03/*tf:err*/")
    . packet(0, "\x03SELECT 2"));
($v) = read_result($s);
is("@{ $v // [] }", '1', 'pipeline: first answer from the server');
like(read_err($s) // '', qr/^1105 /, 'pipeline: second from the filter');
($v) = read_result($s);
is("@{ $v // [] }", '2', 'pipeline: third from the server, in order');

# --- the hooks see responses -------------------------------------------------

query($s, 'SELECT 1');
read_result($s);
like(last_seen($s), qr/^5 \d+ 2 1 0 0 0$/,
   'SELECT 1: 5 packets, status AUTOCOMMIT, first byte 1 (one column)');
query($s, 'DO 1');
read_packet($s);
like(last_seen($s), qr/^1 7 2 0 /, 'DO 1: one OK packet');
query($s, 'SELECT nosuch');
read_packet($s);
like(last_seen($s), qr/^1 \d+ 2 255 /, 'an ERR response: first byte 255');
query($s, 'BEGIN');
read_packet($s);
like(last_seen($s), qr/^1 7 3 0 /, 'BEGIN: status has IN_TRANS');
query($s, 'ROLLBACK');
read_packet($s);
syswrite($s, packet(0, "\x16SELECT ?, ? FROM DUAL"));
my (undef, $pok) = read_packet($s);
my $id = defined $pok ? unpack('x V', $pok) : -1;
1 while (read_packet($s))[1] !~ /^\xfe.{0,8}\z/s;     # param defs, EOF
1 while (read_packet($s))[1] !~ /^\xfe.{0,8}\z/s;     # column defs, EOF
like(last_seen($s), qr/^\d+ \d+ \d+ 0 $id 2 2$/,
     "PREPARE_OK: statement id $id, 2 columns, 2 parameters");

# --- pauses --------------------------------------------------------------------

my $p = login();
my $t0 = Time::HiRes::time();
query($p, '/*tf:pause 400*/ SELECT 42');
my $second = login();
query($second, 'SELECT 8');
($v) = read_result($second);
is("@{ $v // [] }", '8', 'another session is served while one is paused');
my $rin = '';
vec($rin, fileno($p), 1) = 1;
is(select(my $r = $rin, undef, undef, 0), 0,
   'the paused one has no answer yet');
($v) = read_result($p);
is("@{ $v // [] }", '42', 'the paused command then passes');
cmp_ok(Time::HiRes::time() - $t0, '>=', 0.4, 'after the pause');
query($p, '/*tf:hold 50*/');
my (undef, $ok) = read_packet($p);
is(ord($ok // "\xff"), 0, 'a paused command answered by the filter: OK');
query($p, 'SELECT 9');
($v) = read_result($p);
is("@{ $v // [] }", '9', 'and the session goes on');

# a client that hangs up while paused: the session ends at once
my $h = login();
my $port = $h->sockport;
query($h, '/*tf:pause 20000*/ SELECT 1');
close $h;
ok($t->wait_for(sub { $t->grep_log(qr/client closed, client: 127\.0\.0\.1:$port,/) },
                timeout => 5, what => 'the paused session to close'),
   'a hang-up while paused closes the session');

# --- KILL still goes through the proxy -----------------------------------------

my $victim = $t->dbh;
my $killer = $t->dbh;
my $vid = $victim->{mariadb_thread_id};
$victim->do('SELECT SLEEP(20)', { mariadb_async => 1 });
ok($t->wait_for(sub {
        $t->primary_dbh->selectrow_array(q{SELECT COUNT(*) FROM
            information_schema.processlist WHERE info = 'SELECT SLEEP(20)'})
    }, what => 'the sleep to run'), 'a long query runs');
ok($killer->do("KILL QUERY $vid"), 'KILL QUERY <proxy id> accepted');
my $t1 = Time::HiRes::time();
$victim->mariadb_async_result;
cmp_ok(Time::HiRes::time() - $t1, '<', 10, 'and it interrupted the query');

close $_ for $s, $p, $second;    # a graceful stop has nothing to wait for

# --- other paths through command mode -----------------------------------------

my $f = $t->testdir . '/infile.txt';
$t->write_file('infile.txt', join '', map { "$_\tline $_\n" } 10 .. 2009);
my $li = $t->dbh(mariadb_local_infile => 1);
$li->do('CREATE OR REPLACE TABLE filter_li (id INT PRIMARY KEY, v TEXT)');
ok($li->do("LOAD DATA LOCAL INFILE '$f' INTO TABLE filter_li"),
   'LOAD DATA LOCAL INFILE through a filter') or diag($li->errstr);
# the request for the file, MariaDB's progress reports (ERR 0xffff,
# which the tracker steps over), then OK
my $seen = $li->selectrow_array(q{/*tf:last*/}) // $li->errstr;
ok($seen =~ /^(\d+) \d+ \d+ 0 / && $1 >= 2,
   'its response: the request for the file, ..., OK') or diag($seen);
is(scalar $li->selectrow_array('SELECT COUNT(*) FROM filter_li'), 2000,
   'every line arrived');

# a packet hook that ends its session in the middle of what was read:
# the rest of those bytes is nobody's (the tracker stops reading them),
# the client sees its connection go, the worker goes on
{
    my $c = $t->dbh;
    local $c->{RaiseError} = 0;
    local $c->{PrintError} = 0;
    my $r = $c->selectall_arrayref('/*tf:close 5*/ SELECT id, v FROM '
                                   . 'filter_li');
    ok(!defined $r, 'a session a packet hook closed gets no answer');
    is($c->err, 2013, 'but a lost connection') or diag($c->errstr);
    ok(wait_for(sub { $t->error_log =~ /testfilter: closed in a packet hook/
                }), 'the hook\'s close is logged');
    unlike($t->error_log, qr/packet hook after close/,
           'no hook runs after its session closed');
    is(scalar $li->selectrow_array('SELECT COUNT(*) FROM filter_li'), 2000,
       'the worker goes on serving its other sessions');
}

$t->write_file('cu.py', <<'PY');
import sys, MySQLdb
c = MySQLdb.connect(host='127.0.0.1', port=int(sys.argv[1]), user='app',
                    passwd='secret', db='test')
c.change_user(sys.argv[2], sys.argv[3], 'test')
cur = c.cursor()
cur.execute('SELECT CURRENT_USER()')
print(cur.fetchone()[0])
cur.execute('/*tf:rows 3*/')
print(len(cur.fetchall()))
PY
my @out = `$py @{[ $t->testdir ]}/cu.py @{[ $t->port(0) ]} $other other-pw`;
chomp @out;
is("@out", "$other\@% 3", 'change_user() in command mode, and the filter '
   . 'still answers after it');

my $pt = $t->dbh(port => $t->port(2));
ok($pt, 'auth passthrough with filters: login') or diag($DBI::errstr);
is(scalar @{ $pt->selectcol_arrayref('/*tf:rows 5*/') // [] }, 5,
   'the filter answers there too');

my $old = ($t->worker_pids)[0];
my $keep = $t->dbh;
$keep->do('SET @mark = 42');
ok($t->reload, 'reload');
ok($t->wait_for(sub { !kill(0, $old) }, what => 'the old worker to go'),
   'the old worker handed the filtered sessions over and exited');
is(scalar $keep->selectrow_array('SELECT @mark'), 42,
   'a filtered session goes on after the reload, on its backend');
ok(!$keep->do('/*tf:err*/') && $keep->err == 1105,
   'and meets the filter in the new worker');

# --- configuration -------------------------------------------------------------

for my $case ([ 'filters nosuch;', qr/unknown filter "nosuch"/ ],
              [ 'filters readconn;', qr/module "readconn" is not a filter/ ],
              [ 'filters testfilter testfilter;',
                qr/filter "testfilter" is listed twice/ ])
{
    my ($line, $re) = @$case;
    $t->write_file_expand('bad.conf', <<"EOF");
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
        $line
    }
}
EOF
    my ($rc, $out) = $t->test_config(conf => 'bad.conf');
    isnt($rc, 0, "sluice -t refuses '$line'");
    like($out, qr/bad\.conf:8: .*$re/, 'with file:line and the reason')
        or diag($out);
}
