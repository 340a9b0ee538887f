#!/usr/bin/perl

# The floors of the source tree (docs/STYLE: "lower floors never call
# upper ones"): the core and the event loop know no protocol.  Nothing in
# src/core or src/event includes a mysql header or names a mysql or
# session symbol: the mysql module finds its configuration through its
# module context (slc_mysql_conf()), not through the cycle.  The .c files
# do not even say "mysql" (the headers still name the mysql {} context,
# SLC_CONF_MYSQL).  Routers are a mysql-layer concept too: the core names
# no router type or symbol (a module's `router` table is opaque to it).
# Reads the sources only: needs no MariaDB.

use strict;
use warnings;

use FindBin;
use Test::More;

my $root = "$FindBin::Bin/..";
my @files = sort glob("$root/src/core/*.[ch] $root/src/event/*.[ch]");
ok(@files > 10, 'found the core and event sources');

my $protocol = qr/\#include\s+"slc_mysql | \bslc_mysql_\w+
                | \bslc_sessions?_\w+ | \bslc_backend_\w+
                | \bslc_router_\w+/x;

for my $f (@files) {
    (my $name = $f) =~ s{.*/}{};
    open(my $fh, '<', $f) or die "$f: $!";
    my @bad;
    while (my $line = <$fh>) {
        next if $line =~ m{^\s*(/?\*|//)};          # comments
        next unless $line =~ $protocol
                    || ($name =~ /\.c\z/ && $line =~ /mysql/i);
        push @bad, "$.: $line";
    }
    close($fh);
    is(join('', @bad), '', "$name knows no protocol");
}

done_testing();
