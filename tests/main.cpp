// The Catch2 (v2) test runner's main; every other tests/*.cpp holds test cases only.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
