#!/usr/bin/perl

# The harness's Redis Cluster (t/lib/Sluice/Redis.pm), which the Redis
# tier's cluster tests stand on (issue 22, section 3): three masters
# serve the 16384 slots between them, a key's node answers it, another
# node redirects (MOVED) to the node sluice's slot map
# (slc_cache_redis_slots.c, unit tested) would name.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Redis;

my $t = Sluice::Test->new;
Sluice::Redis->need($t);
plan tests => 5;

my @nodes = Sluice::Redis->cluster(dir => $t->testdir, nodes => 3);
is(scalar @nodes, 3, 'three nodes started and joined');
like($nodes[0]->cli('CLUSTER', 'INFO'), qr/cluster_slots_assigned:16384/,
     'the 16384 slots are assigned');
my @masters = $nodes[0]->cli('CLUSTER', 'SLOTS') =~ /^(\d+)$/mg;
my %ports = map { $_->port => 1 } @nodes;
is(scalar(grep { $ports{$_} } @masters) >= 3, 1,
   'CLUSTER SLOTS names the three masters');
# a key on another node than the one asked: MOVED, to that node
my ($asked, $moved);
for my $k (map { "k$_" } 1 .. 20) {
    my $slot = $nodes[0]->cli('CLUSTER', 'KEYSLOT', $k) =~ /(\d+)/ ? $1 : 0;
    my $out = $nodes[0]->cli('GET', $k) // '';
    if ($out =~ /^MOVED (\d+) (\S+)/) {
        ($asked, $moved) = ($slot, "$1 $2");
        last;
    }
}
like($moved // '', qr/^\d+ 127\.0\.0\.1:\d+$/, "a key elsewhere: MOVED $moved");
is((split ' ', $moved // '')[0], $asked, 'with its slot');
