func.func private @f(!m2n.comm<2147483649>)
