pragma circom 2.0.0;

// No public signals at all: nPublic = 0, so IC holds only IC[0] and public.json is [].
template NoPublic() {
    signal input a;
    signal input b;
    signal ab;
    signal abb;
    ab <== a * b;
    abb <== ab * b;
    signal aabb;
    aabb <== abb * a;
    aabb === ab * ab;
}

component main = NoPublic();
