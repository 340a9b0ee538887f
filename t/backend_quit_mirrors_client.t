#!/usr/bin/perl

# A backend connection ends as its client did (issue 19): a client that
# vanishes without COM_QUIT is counted by the server in Aborted_clients,
# and through sluice its backends are too (closed without COM_QUIT); a
# client that says COM_QUIT ends them cleanly.  What broke: a
# readwritesplit session's replica backend never got the client's
# COM_QUIT (it goes to the primary), so the replica counted every clean
# end as an aborted client.  Checked on the servers themselves, for
# readconn and for both backends of a readwritesplit session.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query send_packet);

my $t = Sluice::Test->new;
$t->has('readconn', 'readwritesplit');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        readconn_role primary;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readwritesplit;
        upstream cluster;
    }
}
EOF
$t->run;
$t->plan(12);

my %server = (primary => $t->primary_dbh, replica => $t->replica_dbh);

sub aborted {
    my ($role) = @_;
    return ($server{$role}->selectrow_array(
        "SHOW GLOBAL STATUS LIKE 'Aborted_clients'"))[1];
}

# Whether connection $id of that server has ended.
sub gone {
    my ($role, $id) = @_;
    return !$server{$role}->selectrow_array(
        'SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?',
        undef, $id);
}

# No client connection but ours on either server (connections an earlier
# test left may still be ending, and would count)
sub quiet {
    return wait_for(sub {
        !grep { $server{$_}->selectrow_array(q{SELECT COUNT(*) FROM
            information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()
            AND USER NOT IN ('system user', 'repl', 'event_scheduler')}) }
            keys %server }, what => 'the servers without other clients');
}

sub id_of {
    my ($sock, $hint) = @_;
    my $r = query($sock, ($hint // '') . 'SELECT CONNECTION_ID()');
    return $r && $r->{rows} ? $r->{rows}[0][0] : undef;
}

# A session through PORT_N, with its backends' ids (role => id), ended
# abruptly or with COM_QUIT; then, once each of its backend connections
# has ended, by how much each server's Aborted_clients moved.
sub session_end {
    my ($port, $how, @roles) = @_;
    quiet();
    my %before = map { $_ => aborted($_) } keys %server;
    my $rs = raw_session($t->port($port)) or return 'no session';
    my %id = (primary => id_of($rs->{sock}));
    $id{replica} = id_of($rs->{sock}, '/* sluice: route=replica */ ')
        if grep { $_ eq 'replica' } @roles;
    send_packet($rs->{sock}, 0, "\x01") if $how eq 'quit';
    close $rs->{sock};
    my $ended = wait_for(sub { !grep { !gone($_, $id{$_}) } @roles },
                         what => "the backends of the $how session ending");
    # an abort is counted as its thread ends: wait for the count too
    wait_for(sub { !grep { aborted($_) == $before{$_} } @roles })
        if $how eq 'abort';
    return join ' ', ($ended ? 'ended' : 'still there'),
        map { "$_+" . (aborted($_) - $before{$_}) } @roles;
}

is(session_end(0, 'abort', 'primary'), 'ended primary+1',
   'readconn: a client gone without COM_QUIT is an aborted client');
is(session_end(0, 'quit', 'primary'), 'ended primary+0',
   'readconn: one that said COM_QUIT is not');
is(session_end(1, 'abort', 'primary', 'replica'),
   'ended primary+1 replica+1',
   'readwritesplit: a client gone without COM_QUIT is an aborted client '
   . 'on the primary and on the replica');
is(session_end(1, 'quit', 'primary', 'replica'),
   'ended primary+0 replica+0',
   'readwritesplit: one that said COM_QUIT is not, on either');

# DBD::MariaDB says COM_QUIT at disconnect; in a readwritesplit session
# that also wrote, used a replica and left it idle
quiet();
my %before = map { $_ => aborted($_) } keys %server;
my $d = $t->dbh(port => $t->port(1));
ok($d && $d->do('SET @a = 1') && defined $d->selectrow_array('SELECT @a'),
   'a session through readwritesplit');
my $pid = $d->selectrow_array('SELECT CONNECTION_ID()');
my $rid = $d->selectrow_array('/* sluice: route=replica */ '
                              . 'SELECT CONNECTION_ID()');
ok($pid && $rid, 'with a primary and a replica backend');
$d->disconnect;
ok(wait_for(sub { gone('primary', $pid) && gone('replica', $rid) },
            what => 'both backends ending'),
   'disconnect ends both backends');
is(aborted('primary') - $before{primary}, 0, 'no aborted client on the '
   . 'primary');
is(aborted('replica') - $before{replica}, 0, 'nor on the replica');

# the log says how each session ended, as before
my @ends = $t->grep_log(qr/\] \d+: \*\d+ (?:client closed|backend closed)/);
ok(scalar @ends >= 5, 'each session logged its end');
unlike($t->error_log, qr/\[(?:warn|error)\].*replica .* dropped/,
       'no replica backend was dropped for the COM_QUIT');
ok(!grep({ /\[error\]/ } $t->grep_log(qr/closed/)),
   'no session end logged as an error');
