#include <gtest/gtest.h>

#include "math/encoding.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

TEST(Field, DecimalRoundTripAndArithmetic) {
  auto a = *field_from_decimal<Fr>("12345678901234567890123456789");
  auto b = *field_from_decimal<Fr>("98765432109876543210");
  EXPECT_EQ(field_to_decimal(a * b), "1219326311370217952249657064223746380111126352690");
  EXPECT_EQ(field_to_decimal(Fr::zero() - Fr::one()),
            "52435875175126190479447740508185965837690552500527637822603658699938581184512");
  EXPECT_EQ(a * a.inv(), Fr::one());
  EXPECT_FALSE(field_from_decimal<Fr>(
                   "52435875175126190479447740508185965837690552500527637822603658699938581184513")
                   .has_value());
}

TEST(Field, RootOfUnityOrder) {
  Fr w = root_of_unity(32);
  Fr t = w;
  for (int i = 0; i < 31; i++) t = t.sqr();
  EXPECT_EQ(t, Fr::zero() - Fr::one());
  EXPECT_EQ(t.sqr(), Fr::one());
}

TEST(Curve, GeneratorsOnCurveAndOrderR) {
  EXPECT_TRUE(g1_generator().on_curve());
  EXPECT_TRUE(g2_generator().on_curve());
  Scalar r;
  for (int i = 0; i < 4; i++) r.l[i] = FrParams::MOD[i];
  EXPECT_TRUE(G1::from_affine(g1_generator()).mul(r).is_inf());
  EXPECT_TRUE(G2::from_affine(g2_generator()).mul(r).is_inf());
  G1 g = G1::from_affine(g1_generator());
  EXPECT_EQ(g + g, g.dbl());
  EXPECT_EQ((g.dbl() + g).to_affine(), G1::from_affine(g1_generator()).mul(Scalar{{3, 0, 0, 0}}).to_affine());
  EXPECT_EQ(g.dbl().add_affine(g1_generator()), g.dbl() + g);
}
