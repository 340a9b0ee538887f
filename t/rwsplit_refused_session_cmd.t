#!/usr/bin/perl

# Regression (issue 19, item 4): a session command the primary refused
# (USE nosuchdb, SET sql_mode = 'NOT_A_MODE', SET transaction_isolation =
# ..., unknown to MariaDB 10.11) stayed in the session's history; the
# replica refused it too and was dropped, the read waiting for it got ERR
# 1927 "dropped by the router" although retry_failed_reads is on, and the
# session never used a replica again.  Now a session command reaches the
# history and the replicas only once the primary accepted it; and one that
# the primary accepted but a replica refuses (a database the replica
# lacks) drops that replica with the read retried on the primary.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my $u = $t->name . '_u';
$t->server_user($u, 'u-pw');
my ($pid, $rid) = $t->run_rwsplit(plan => 16, users => { $u => 'u-pw' });
my $P = $t->primary_dbh;
my $R = $t->replica_dbh;
$P->do("GRANT ALL ON rws_primary_only.* TO '$u'\@'%'");
# a database the replica lacks
$P->do('SET sql_log_bin = 0');
$P->do('CREATE DATABASE IF NOT EXISTS rws_primary_only');
$P->do('SET sql_log_bin = 1');
$R->do('DROP DATABASE IF EXISTS rws_primary_only');

sub where {
    my ($d) = @_;
    my ($id) = $d->selectrow_array('SELECT @@server_id');
    return !defined $id ? 'error: ' . ($d->errstr // '?')
         : $id == $pid ? 'primary' : $id == $rid ? 'replica' : "? $id";
}

sub replica_ids {
    return @{ $R->selectcol_arrayref(
        'SELECT id FROM information_schema.processlist WHERE user = ?',
        undef, $u) };
}

# the account on the replica first (else its first replica backend is
# refused, and dropped, before replication made it)
wait_for(sub { ($R->selectrow_array(
    'SELECT COUNT(*) FROM mysql.user WHERE user = ?', undef, $u))[0] },
    what => 'the account on the replica');
my $d = $t->dbh(user => $u, password => 'u-pw');
ok(wait_for(sub { where($d) eq 'replica' }, what => 'a read on the replica'),
   'a read opens the replica backend');
my $log0 = length $t->error_log;

my @refused = (
    [ 'USE nosuchdb', 1044 ],          # (1049 for an account with rights
                                       # on every database)
    [ q{SET sql_mode = 'NOT_A_MODE'}, 1231 ],
    [ q{SET transaction_isolation = 'READ-COMMITTED'}, 1193 ],
);
for my $c (@refused) {
    ok(!$d->do($c->[0]) && $d->err == $c->[1], "$c->[0]: ERR $c->[1]")
        or diag($d->err, ' ', $d->errstr);
    is(where($d), 'replica', 'the next read runs on the replica');
}
unlike(substr($t->error_log, $log0), qr/dropped from the session/,
       'no replica backend was dropped');

# a new replica backend is given the history without them
my @ids = replica_ids();
is(scalar @ids, 1, 'one replica backend');
$R->do("KILL CONNECTION $ids[0]");
ok(wait_for(sub { substr($t->error_log, $log0)
                  =~ /replica \S+ dropped from the session/ },
            what => 'the killed replica backend dropped'),
   'the replica backend is killed');
is(where($d), 'replica', 'a new one answers the next read: the history it '
   . 'replayed holds no refused command');
is(scalar(() = substr($t->error_log, $log0) =~ /dropped from the session/),
   1, 'and it was not dropped');

# accepted by the primary, refused by the replica: the read waiting
# behind it runs on the primary, the session stays there
ok($d->do('USE rws_primary_only'), 'USE of a database the replica lacks');
my @got = $d->selectrow_array('SELECT DATABASE(), @@server_id');
is_deeply(\@got, [ 'rws_primary_only', $pid ],
          'the next read is answered, by the primary')
    or diag($d->errstr);
like($t->error_log, qr/refused a session command the primary accepted/,
     'the replica was dropped for it');
is(where($d), 'primary', 'reads stay on the primary');
$t->allow_log(qr/dropped from the session/);
